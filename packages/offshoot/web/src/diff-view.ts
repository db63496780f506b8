// The diff viewer: two targets, schema changes, per-table counts, one page of one table's row changes, and the
// SQL patch to download.
import type { ApiDiff, ApiDiffRow, ApiMerge, ApiRow } from '../../src/ui/api-types.js';
import { h } from './dom.js';
import { value } from './format.js';
import { mergePreview, mergeSides } from './merge-view.js';
import { diffUrl, navigate } from './router.js';

function columns(rows: ApiDiffRow[]): string[] {
  const cols = new Set<string>();
  for (const r of rows)
    for (const row of [r.row, r.before, r.after]) if (row) for (const k of Object.keys(row)) cols.add(k);
  return [...cols];
}

function cell(r: ApiDiffRow, col: string): HTMLTableCellElement {
  if (r.op !== '~') return h('td', {}, value((r.row as ApiRow)[col]));
  const before = value(r.before?.[col]);
  const after = value(r.after?.[col]);
  if (before === after) return h('td', {}, after);
  return h('td', { class: 'changed-cell' }, h('del', {}, before), ' → ', h('ins', {}, after));
}

/** Renders the diff form and, when both sides are given, the diff (and the merge preview when asked: `merge`). */
export function diffView(q: URLSearchParams, d: ApiDiff | undefined, merge?: ApiMerge): HTMLElement {
  const left = h('input', {
    name: 'left',
    value: q.get('left') ?? '',
    placeholder: 'db@branch[@checkpoint]',
    required: true,
  });
  const right = h('input', {
    name: 'right',
    value: q.get('right') ?? '',
    placeholder: 'db@branch[@checkpoint]',
    required: true,
  });
  const form = h(
    'form',
    { class: 'diff-form' },
    'left ',
    left,
    ' right ',
    right,
    h('button', { type: 'submit' }, 'diff'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    navigate(diffUrl(left.value.trim(), right.value.trim()));
  });
  const out = h('section', { class: 'diff' }, h('h2', {}, 'Diff'), form);
  if (d === undefined) return out;
  const sqlHref = `/api/diff.sql?${new URLSearchParams({ left: d.left, right: d.right }).toString()}`;
  out.append(
    h(
      'p',
      {},
      h('a', { href: sqlHref, download: true, class: 'button', 'data-sql': true }, 'download SQL patch (--sql)'),
      h('span', { class: 'muted' }, ` turns ${d.left} into ${d.right}`),
    ),
  );
  const sides = mergeSides(d.left, d.right);
  if (merge !== undefined) out.append(mergePreview(merge));
  else if (sides !== undefined)
    out.append(
      h(
        'p',
        {},
        h(
          'a',
          { href: diffUrl(d.left, d.right, { merge: '1' }), 'data-nav': true, 'data-merge-link': true },
          `preview merging ${sides.source} into ${sides.into}`,
        ),
      ),
    );
  out.append(h('h3', {}, `Schema changes (${d.schema.length})`));
  if (d.schema.length === 0) out.append(h('p', { class: 'muted' }, 'none'));
  for (const c of d.schema)
    out.append(
      h(
        'div',
        { class: `schema-change ${c.change}`, 'data-schema': c.name },
        h('strong', {}, `${c.change} ${c.type} ${c.name}`),
        c.left ? h('pre', { class: 'ddl left' }, c.left) : null,
        c.right ? h('pre', { class: 'ddl right' }, c.right) : null,
      ),
    );
  out.append(h('h3', {}, 'Tables'));
  const tables = h('ul', { class: 'tables' });
  for (const t of d.tables) {
    const n = t.added + t.removed + t.changed;
    const active = d.page?.table === t.table;
    tables.append(
      h(
        'li',
        { class: active ? 'active' : '', 'data-table': t.table, 'data-status': t.status },
        h('a', { href: diffUrl(d.left, d.right, { table: t.table }), 'data-nav': true }, t.table),
        ` ${t.status}`,
        n > 0 ? h('span', { class: 'counts' }, ` +${t.added} −${t.removed} ~${t.changed}`) : null,
      ),
    );
  }
  out.append(tables);
  const p = d.page;
  if (p === undefined) {
    out.append(h('p', { class: 'muted', 'data-rows': 0 }, 'No row changes.'));
    return out;
  }
  const cols = columns(p.rows);
  out.append(
    h(
      'h3',
      {},
      `${p.table}: rows ${p.total === 0 ? 0 : p.offset + 1}–${Math.min(p.offset + p.limit, p.total)} of ${p.total}`,
    ),
  );
  const e = d.page_error;
  if (e !== undefined) {
    // The rows alone pass what the server may send: say so, and offer the same rows fewer at a time.
    const fewer = Math.max(1, Math.floor(p.limit / 10));
    out.append(
      h(
        'div',
        { class: 'error', 'data-error': e.code ?? 'error', 'data-page-error': p.table },
        h('strong', {}, e.error),
        e.hint ? h('p', {}, e.hint) : null,
        p.limit > 1
          ? h(
              'a',
              {
                href: diffUrl(d.left, d.right, { table: p.table, offset: String(p.offset), limit: String(fewer) }),
                'data-nav': true,
              },
              `show ${fewer} at a time`,
            )
          : null,
      ),
    );
    return out;
  }
  out.append(
    h(
      'table',
      { class: 'grid rows', 'data-table-rows': p.table },
      h('thead', {}, h('tr', {}, h('th', {}, ''), ...cols.map((c) => h('th', {}, c)))),
      h(
        'tbody',
        {},
        ...p.rows.map((r) =>
          h(
            'tr',
            { class: `op-${r.op === '+' ? 'add' : r.op === '-' ? 'remove' : 'change'}`, 'data-op': r.op },
            h('td', { class: 'op' }, r.op),
            ...cols.map((c) => cell(r, c)),
          ),
        ),
      ),
    ),
  );
  const pager = h('p', { class: 'pager' });
  const page = (offset: number): string =>
    diffUrl(d.left, d.right, { table: p.table, offset: String(offset), limit: String(p.limit) });
  if (p.offset > 0)
    pager.append(h('a', { href: page(Math.max(0, p.offset - p.limit)), 'data-nav': true }, '← previous'), ' ');
  if (p.offset + p.limit < p.total)
    pager.append(h('a', { href: page(p.offset + p.limit), 'data-nav': true }, 'next →'));
  out.append(pager);
  return out;
}
