// The diff viewer's merge preview: what merging the right branch into the left one would do, computed and not
// applied: the rows taken from each side and the conflicts, each with the common, source and target rows.
import type { ApiMerge, ApiMergeTable, ApiRow } from '../../src/ui/api-types.js';
import { h } from './dom.js';
import { value } from './format.js';

/** The two branch heads of one database a diff compares, as a merge's source (right) and target (left). */
export function mergeSides(left: string, right: string): { db: string; source: string; into: string } | undefined {
  const l = left.split('@');
  const r = right.split('@');
  if (l.length !== 2 || r.length !== 2 || l[0] !== r[0] || l[1] === r[1]) return undefined;
  return { db: l[0] as string, source: r[1] as string, into: l[1] as string };
}

function counts(side: string, tables: ApiMergeTable[]): HTMLElement {
  const list = h('ul', { class: 'tables', 'data-merge-side': side });
  for (const t of tables)
    list.append(
      h(
        'li',
        { 'data-table': t.table },
        t.table,
        h('span', { class: 'counts' }, ` +${t.inserted} −${t.deleted} ~${t.updated}`),
      ),
    );
  if (tables.length === 0) list.append(h('li', { class: 'muted' }, 'no rows'));
  return list;
}

function rowText(row: ApiRow | null | undefined): string {
  if (row === undefined) return '—';
  if (row === null) return 'deleted';
  return Object.entries(row)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(' ');
}

/** Renders a merge preview: counts per side, then one line per conflict. */
export function mergePreview(m: ApiMerge): HTMLElement {
  const out = h(
    'section',
    { class: 'merge-preview', 'data-conflicts': m.conflicts.length },
    h('h3', {}, `Merge preview: ${m.db}@${m.source} into ${m.db}@${m.target}`),
    h('p', { class: 'muted' }, `common state: ${m.base.kind} at ${m.base.at}; nothing is written until you run`),
    h('pre', {}, `offshoot merge ${m.db}@${m.source} --into ${m.target}`),
    h('h4', {}, `Taken from ${m.source}`),
    counts('source', m.tables),
    h('h4', {}, `Kept from ${m.target}`),
    counts('target', m.kept),
    h('h4', {}, `Conflicts (${m.conflicts.length})`),
  );
  if (m.conflicts.length === 0) {
    out.append(h('p', { class: 'muted' }, 'none: the merge would apply as it is'));
    return out;
  }
  out.append(
    h(
      'table',
      { class: 'grid merge-conflicts' },
      h('thead', {}, h('tr', {}, ...['table', 'kind', 'key', 'common', m.source, m.target].map((c) => h('th', {}, c)))),
      h(
        'tbody',
        {},
        ...m.conflicts.map((c) =>
          h(
            'tr',
            { 'data-merge-conflict': c.table, 'data-kind': c.kind },
            h('td', {}, c.table),
            h('td', {}, c.kind),
            h('td', {}, rowText(c.key)),
            h('td', {}, rowText(c.base)),
            h('td', {}, rowText(c.source)),
            h('td', {}, rowText(c.target)),
          ),
        ),
      ),
    ),
  );
  return out;
}
