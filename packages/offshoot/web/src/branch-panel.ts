// The branch panel: the branch's fields, the CLI commands for what comes next, its checkpoints with meta, its
// history from the branch log, then its head chain with the storage internals (lineage ids, epochs, objects).
import type { ApiBranchDetail, ApiEdge, ApiLogRecord } from '../../src/ui/api-types.js';
import { h, table } from './dom.js';
import { bytes, count, countdown, when } from './format.js';
import { diffUrl, treeUrl } from './router.js';

// navigator.clipboard exists only in secure contexts (loopback counts; plain http to another host does not), so
// the fallback selects the text in a scratch textarea and copies the selection.
function copyText(text: string): Promise<void> {
  if (navigator.clipboard) return navigator.clipboard.writeText(text);
  const area = h('textarea', { readonly: true, class: 'scratch' }, text);
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
}

function copyButton(text: string): HTMLButtonElement {
  const b = h('button', { class: 'copy', type: 'button', title: 'copy to clipboard' }, 'copy');
  b.addEventListener('click', () => {
    copyText(text).then(
      () => {
        b.textContent = 'copied';
        setTimeout(() => {
          b.textContent = 'copy';
        }, 1200);
      },
      () => {
        b.textContent = 'select and copy';
      },
    );
  });
  return b;
}

function field(name: string, v: string | number | undefined): HTMLElement | null {
  if (v === undefined || v === '') return null;
  return h('div', { class: 'field' }, h('dt', {}, name), h('dd', {}, String(v)));
}

// What a record says besides its op and txids: a checkpoint's name, a fork's source, a flush's pages and bytes.
function recordDetail(r: ApiLogRecord): string {
  const parts: string[] = [];
  if (r.name !== undefined) parts.push(r.name);
  if (r.from !== undefined) parts.push(`from ${r.from}`);
  if (r.undo !== undefined) parts.push(`undo point ${r.undo}`);
  if (r.ttl !== undefined) parts.push(`ttl ${r.ttl}`);
  if (r.pages !== undefined) parts.push(`${count(r.pages, 'page')}, ${bytes(r.bytes ?? 0)}`);
  for (const [k, v] of Object.entries(r.meta)) parts.push(`${k}=${v}`);
  return parts.join(' · ');
}

/**
 * The branch's timeline, newest first: every change from its log, who asked and through what; each state links to
 * its diff against the head, addressed by the moment `@tx:N`.
 */
function history(d: ApiBranchDetail, t: string): HTMLElement {
  const log = d.history;
  const rows = [...log.records].reverse();
  const head = d.branch.head_txid;
  return h(
    'section',
    { class: 'history', 'data-history': d.branch.branch },
    h('h3', {}, `History (${log.truncated ? `newest ${rows.length}` : rows.length})`),
    rows.length === 0
      ? h('p', { class: 'muted' }, 'no log yet: the branch predates it, or an earlier offshoot last wrote it')
      : table(
          ['when', 'what', 'txid', 'who', 'through', 'details', ''],
          rows.map((r) => [
            when(r.at),
            r.op,
            r.txid_before === r.txid_after ? String(r.txid_after) : `${r.txid_before} → ${r.txid_after}`,
            h('span', { class: `actor-${r.actor}` }, r.actor),
            r.surface,
            recordDetail(r),
            r.txid_after > 0 && r.txid_after !== head
              ? h('a', { href: diffUrl(`${t}@tx:${r.txid_after}`, t), 'data-nav': true }, 'diff to head')
              : '',
          ]),
        ),
    log.truncated ? h('p', { class: 'muted' }, `older records: offshoot log ${t} --limit 0`) : null,
  );
}

/** Renders the panel for one branch; `children` are the tree's edges from it. */
export function branchPanel(d: ApiBranchDetail, children: readonly ApiEdge[]): HTMLElement {
  const b = d.branch;
  const t = `${d.db}@${b.branch}`;
  const parentLink =
    b.parent !== undefined
      ? h(
          'a',
          { href: treeUrl(b.parent.db, b.parent.branch), 'data-nav': true },
          `${b.parent.db}@${b.parent.branch} @${b.parent.txid}`,
        )
      : null;
  return h(
    'aside',
    { class: 'panel', 'data-panel': b.branch },
    h('h2', {}, t, ' ', h('span', { class: `pill state-${b.state}` }, b.state)),
    h(
      'dl',
      { class: 'fields' },
      field('head txid', b.head_txid),
      field('storage', b.storage),
      field('protected', b.protected ? 'yes' : 'no'),
      field(
        'ephemeral',
        b.ephemeral
          ? 'yes: held by this daemon and gone with it, unless kept (a named checkpoint, a promote)'
          : undefined,
      ),
      field('ttl', b.ttl),
      field(
        'expires',
        b.expires_at !== undefined
          ? b.expired
            ? 'expired, not reaped yet'
            : `${countdown(b.expires_at)} (${when(b.expires_at)})`
          : undefined,
      ),
      field('touched', when(b.touched_at)),
      field('lease', b.lease_holder ? `${b.lease_holder} until ${when(b.lease_expiry)}` : undefined),
      field('undo point of', b.undo ? `${b.undo.of} (${b.undo.kind})` : undefined),
      b.meta ? field('meta', JSON.stringify(b.meta)) : null,
    ),
    parentLink ? h('p', {}, 'made from ', parentLink) : null,
    children.length > 0
      ? h(
          'p',
          { class: 'children' },
          `made from it (${children.length}): `,
          ...children.flatMap((e, i) => [
            i > 0 ? ', ' : null,
            h('a', { href: treeUrl(d.db, e.to), 'data-nav': true, 'data-child': e.to }, e.to),
            e.kind === 'fork' ? null : ` (${e.kind})`,
          ]),
        )
      : null,
    b.session
      ? h(
          'section',
          { class: 'session' },
          h('h3', {}, 'Open session'),
          h(
            'dl',
            { class: 'fields' },
            field('holder', b.session.holder),
            field('durable through', `txid ${b.session.durable_txid}`),
            field('capture lag', bytes(b.session.capture_lag_bytes)),
            field('last flush', when(b.session.last_flush_at)),
            field('error', b.session.error ?? b.session.flush_error),
          ),
        )
      : null,
    // What to do next comes before the history and the storage internals (lineage ids, epochs, chain objects).
    h('h3', {}, 'Next steps'),
    h(
      'ul',
      { class: 'commands' },
      ...d.commands.map((c) =>
        h('li', {}, h('span', { class: 'muted' }, c.label), h('code', {}, c.command), copyButton(c.command)),
      ),
    ),
    h('h3', {}, `Checkpoints (${b.checkpoints.length})`),
    table(
      ['name', 'txid', 'created', 'meta', ''],
      b.checkpoints.map((c) => [
        c.name,
        c.txid,
        when(c.created_at),
        c.meta ? JSON.stringify(c.meta) : '',
        h('a', { href: diffUrl(`${t}@${c.name}`, t), 'data-nav': true }, 'diff to head'),
      ]),
    ),
    history(d, t),
    h('h3', {}, `Chain: ${count(d.chain.members.length, 'object')}, ${bytes(d.chain.bytes)}`),
    h(
      'dl',
      { class: 'fields' },
      field('lineage', d.ref.lineage),
      field('epoch', `${d.ref.epoch} (head ${d.ref.head_epoch})`),
      field('base', d.ref.base ? `${d.ref.base.lineage} @${d.ref.base.txid}` : undefined),
    ),
    h('p', { class: 'muted' }, 'reads through lineages: ', d.chain.lineages.join(' → ')),
    table(
      ['object', 'txids', 'bytes'],
      d.chain.members.map((m) => [`${m.kind} · ${m.lineage}`, `${m.min_txid}–${m.max_txid}`, bytes(m.bytes)]),
    ),
  );
}
