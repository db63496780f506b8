// The branch tree as an outline: one row per branch, indented under the branch it was forked from, with a filter box
// and collapsible subtrees. Only the rows in the scrolled-to window are in the DOM, so 10,000 branches open as fast as
// 50: the page keeps the whole tree as data and draws a screenful.
import type { ApiBranch, ApiTree } from '../../src/ui/api-types.js';
import { h } from './dom.js';
import { bytes, count } from './format.js';
import { navigate, treeUrl } from './router.js';
import { ttlText } from './tree-view.js';

/** Height of one row in CSS pixels (app.css `.outline .row` matches it). */
const ROW_H = 28;
/** Rows drawn above and below the visible window, so a short scroll shows no gap. */
const OVERSCAN = 10;

/** What the reader chose for one database's outline; kept across live redraws of the same database. */
interface OutlineState {
  filter: string;
  collapsed: Set<string>;
  /** The branch last opened from this outline: a newly opened one is scrolled into view once, then left alone. */
  shown?: string;
}

const states = new Map<string, OutlineState>();

interface Row {
  b: ApiBranch;
  /** The branch last promoted onto this one, when its parent pointer is a promote. */
  promotedFrom?: string;
  depth: number;
  children: number;
  open: boolean;
  match: boolean;
}

// Children by the branch each was forked from (or kept an undo point of), in the tree's name order. A promote edge
// hangs nothing: the promoted target keeps its own place (as the graph lays a promote out like a fork the other way
// round). A branch with no such parent is a root, and so is one no root reaches (a parent loop: a damaged store).
interface Forest {
  roots: ApiBranch[];
  kids: Map<string, ApiBranch[]>;
  parentOf: Map<string, string>;
  promotedFrom: Map<string, string>;
}

function forest(tree: ApiTree): Forest {
  const byName = new Map(tree.branches.map((b) => [b.branch, b]));
  const kids = new Map<string, ApiBranch[]>();
  const parentOf = new Map<string, string>();
  const promotedFrom = new Map<string, string>();
  for (const e of tree.edges) {
    if (e.kind === 'promote') promotedFrom.set(e.to, e.from);
    const child = byName.get(e.to);
    if (e.kind === 'promote' || child === undefined || parentOf.has(e.to) || e.from === e.to) continue;
    parentOf.set(e.to, e.from);
  }
  const roots: ApiBranch[] = [];
  for (const b of tree.branches) {
    const p = parentOf.get(b.branch);
    if (p === undefined) {
      roots.push(b);
      continue;
    }
    const list = kids.get(p);
    if (list) list.push(b);
    else kids.set(p, [b]);
  }
  const reached = new Set<string>();
  const stack = [...roots];
  for (let b = stack.pop(); b !== undefined; b = stack.pop()) {
    reached.add(b.branch);
    stack.push(...(kids.get(b.branch) ?? []));
  }
  for (const b of tree.branches) {
    if (reached.has(b.branch)) continue;
    roots.push(b);
    const more = [b];
    for (let x = more.pop(); x !== undefined; x = more.pop()) {
      if (reached.has(x.branch)) continue;
      reached.add(x.branch);
      more.push(...(kids.get(x.branch) ?? []));
    }
  }
  return { roots, kids, parentOf, promotedFrom };
}

// The rows on show, in depth-first order: with a filter, the matches and their ancestors (every subtree open);
// without, every branch not under a collapsed one. Each branch shows once, even under a parent loop.
function visibleRows(tree: ApiTree, st: OutlineState, f: Forest): Row[] {
  const { roots, kids, parentOf, promotedFrom } = f;
  const needle = st.filter.trim().toLowerCase();
  let keep: Set<string> | undefined;
  if (needle !== '') {
    keep = new Set();
    for (const b of tree.branches) {
      if (!b.branch.toLowerCase().includes(needle)) continue;
      for (let n: string | undefined = b.branch; n !== undefined && !keep.has(n); n = parentOf.get(n)) keep.add(n);
    }
  }
  const rows: Row[] = [];
  const seen = new Set<string>();
  const walk = (start: ApiBranch[]): void => {
    const stack: Array<{ b: ApiBranch; depth: number }> = [...start].reverse().map((b) => ({ b, depth: 0 }));
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      const { b, depth } = top;
      if (seen.has(b.branch) || (keep !== undefined && !keep.has(b.branch))) continue;
      seen.add(b.branch);
      const under = (kids.get(b.branch) ?? []).filter((c) => keep === undefined || keep.has(c.branch));
      const open = keep !== undefined || !st.collapsed.has(b.branch);
      const from = promotedFrom.get(b.branch);
      rows.push({
        b,
        ...(from !== undefined ? { promotedFrom: from } : {}),
        depth,
        children: under.length,
        open,
        match: needle !== '' && b.branch.toLowerCase().includes(needle),
      });
      if (open) for (let i = under.length - 1; i >= 0; i--) stack.push({ b: under[i] as ApiBranch, depth: depth + 1 });
    }
  };
  walk(roots);
  return rows;
}

function drawRow(db: string, r: Row, index: number, selected: string | undefined, now: number): HTMLElement {
  const b = r.b;
  const classes = ['row', `state-${b.state}`, `storage-${b.storage}`];
  if (b.protected) classes.push('protected');
  if (b.ephemeral) classes.push('ephemeral');
  if (b.expired) classes.push('expired');
  if (b.session !== undefined) classes.push('has-session');
  if (b.branch === selected) classes.push('selected');
  if (r.match) classes.push('match');
  const row = h(
    'div',
    {
      class: classes.join(' '),
      role: 'treeitem',
      tabindex: -1,
      'aria-level': r.depth + 1,
      'aria-expanded': r.children > 0 ? String(r.open) : undefined,
      'aria-selected': String(b.branch === selected),
      'data-branch': b.branch,
      'data-index': index,
      'data-state': b.state,
      'data-head': b.head_txid,
      'data-storage': b.storage,
      'data-expired': b.expired ? 'true' : 'false',
    },
    r.children > 0
      ? h(
          'button',
          {
            type: 'button',
            class: 'toggle',
            tabindex: -1,
            'data-toggle': b.branch,
            'aria-label': `${r.open ? 'collapse' : 'expand'} ${b.branch}`,
          },
          r.open ? '▾' : '▸',
        )
      : h('span', { class: 'toggle-space' }),
    h('a', { href: treeUrl(db, b.branch), 'data-nav': true, class: 'name', tabindex: -1 }, b.branch),
    r.children > 0 && !r.open ? h('span', { class: 'muted count' }, `+${r.children}`) : null,
    h('span', { class: 'head muted' }, `txid ${b.head_txid}`),
    h('span', { class: `badge badge-${b.state}` }, b.state),
    h('span', { class: `badge badge-${b.storage}` }, b.storage),
    b.protected ? h('span', { class: 'badge badge-protected' }, 'protected') : null,
    b.ephemeral
      ? h(
          'span',
          { class: 'badge badge-ephemeral', title: 'held by this daemon; gone with it unless kept' },
          'ephemeral',
        )
      : null,
    b.undo !== undefined ? h('span', { class: `badge badge-${b.undo.kind}` }, b.undo.kind) : null,
    r.promotedFrom !== undefined ? h('span', { class: 'muted promoted' }, `promoted from ${r.promotedFrom}`) : null,
    b.checkpoints.length > 0 ? h('span', { class: 'muted' }, count(b.checkpoints.length, 'checkpoint')) : null,
    b.session !== undefined
      ? h(
          'span',
          { class: 'sub' },
          `session · durable@${b.session.durable_txid} · lag ${bytes(b.session.capture_lag_bytes)}`,
        )
      : null,
    b.session === undefined && ttlText(b, now) !== undefined
      ? h(
          'span',
          { class: b.expired ? 'sub warn' : 'sub', 'data-ttl': b.expires_at !== undefined ? b.branch : undefined },
          ttlText(b, now) ?? '',
        )
      : null,
  );
  // Set through the CSSOM: the page's CSP allows no inline style attributes.
  row.style.top = `${index * ROW_H}px`;
  row.style.paddingLeft = `${8 + r.depth * 18}px`;
  return row;
}

/**
 * The outline of a database's branches: a filter box, then a scrolling tree (role=tree) whose rows are drawn only
 * while in view. Arrow keys move between rows, Right/Left expand and collapse, Enter opens the branch.
 */
export function treeOutline(tree: ApiTree, selected?: string): HTMLElement {
  let st = states.get(tree.db);
  if (st === undefined) states.set(tree.db, (st = { filter: '', collapsed: new Set() }));
  const state = st;
  const shape = forest(tree);
  let rows = visibleRows(tree, state, shape);
  let focusIndex = Math.max(
    0,
    rows.findIndex((r) => r.b.branch === selected),
  );
  const spacer = h('div', { class: 'spacer' });
  const scroll = h(
    'div',
    { class: 'tree-scroll outline', role: 'tree', 'aria-label': `branches of ${tree.db}`, 'data-tree': tree.db },
    spacer,
  );
  const summary = h('span', { class: 'muted filter-count', 'aria-live': 'polite' });
  const input = h('input', {
    type: 'search',
    class: 'tree-filter',
    placeholder: 'filter branches by name',
    'aria-label': 'filter branches by name',
    value: state.filter,
  });

  // What the DOM holds now: a scroll that stays within the drawn window redraws nothing, so a click in progress
  // keeps its target.
  let version = 0;
  let drawnKey = '';
  const draw = (): void => {
    const height = scroll.clientHeight || window.innerHeight;
    const first = Math.max(0, Math.floor(scroll.scrollTop / ROW_H) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((scroll.scrollTop + height) / ROW_H) + OVERSCAN);
    const key = `${version}:${first}:${last}:${focusIndex}`;
    if (key === drawnKey) return;
    drawnKey = key;
    const now = Date.now();
    const hadFocus = scroll.contains(document.activeElement);
    const drawn: HTMLElement[] = [];
    for (let i = first; i < last; i++) {
      const r = rows[i] as Row;
      const el = drawRow(tree.db, r, i, selected, now);
      if (i === focusIndex) el.tabIndex = 0;
      drawn.push(el);
    }
    spacer.replaceChildren(...drawn);
    if (!drawn.some((el) => el.tabIndex === 0)) drawn[0]?.setAttribute('tabindex', '0');
    if (hadFocus)
      (spacer.querySelector(`[data-index="${focusIndex}"]`) as HTMLElement | null)?.focus({ preventScroll: true });
    scroll.dataset.rows = String(rows.length);
    scroll.dataset.drawn = `${first}-${last}`;
  };

  const relist = (): void => {
    version++;
    rows = visibleRows(tree, state, shape);
    spacer.style.height = `${rows.length * ROW_H}px`;
    focusIndex = Math.min(focusIndex, Math.max(0, rows.length - 1));
    const matches = rows.filter((r) => r.match).length;
    summary.textContent =
      state.filter.trim() === ''
        ? `${rows.length} of ${tree.branches.length} shown`
        : `${matches} match${matches === 1 ? '' : 'es'} · ${rows.length} shown with their ancestors`;
    draw();
  };

  const toggle = (branch: string, open?: boolean): void => {
    const isOpen = !state.collapsed.has(branch);
    if (open === isOpen) return;
    if (isOpen) state.collapsed.add(branch);
    else state.collapsed.delete(branch);
    relist();
  };

  const focusRow = (i: number): void => {
    if (rows.length === 0) return;
    focusIndex = Math.max(0, Math.min(rows.length - 1, i));
    const top = focusIndex * ROW_H;
    if (top < scroll.scrollTop) scroll.scrollTop = top;
    else if (top + ROW_H > scroll.scrollTop + scroll.clientHeight) scroll.scrollTop = top + ROW_H - scroll.clientHeight;
    draw();
    (spacer.querySelector(`[data-index="${focusIndex}"]`) as HTMLElement | null)?.focus({ preventScroll: true });
  };

  let frame = 0;
  scroll.addEventListener('scroll', () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(draw);
  });
  scroll.addEventListener('click', (ev) => {
    const t = (ev.target as Element).closest('button[data-toggle]');
    if (t instanceof HTMLElement && t.dataset.toggle !== undefined) toggle(t.dataset.toggle);
  });
  scroll.addEventListener('keydown', (ev) => {
    const row = (ev.target as Element).closest<HTMLElement>('.row');
    if (row === null) return;
    const i = Number(row.dataset.index);
    const r = rows[i];
    if (r === undefined) return;
    const keys: Record<string, () => void> = {
      ArrowDown: () => focusRow(i + 1),
      ArrowUp: () => focusRow(i - 1),
      Home: () => focusRow(0),
      End: () => focusRow(rows.length - 1),
      ArrowRight: () => (r.children > 0 && !r.open ? toggle(r.b.branch, true) : focusRow(i + 1)),
      ArrowLeft: () => {
        if (r.children > 0 && r.open && state.filter.trim() === '') toggle(r.b.branch, false);
        else {
          const up = rows.slice(0, i).findLastIndex((x) => x.depth < r.depth);
          if (up >= 0) focusRow(up);
        }
      },
      Enter: () => navigate(treeUrl(tree.db, r.b.branch)),
    };
    const act = keys[ev.key];
    if (act === undefined) return;
    ev.preventDefault();
    focusIndex = i;
    act();
  });
  input.addEventListener('input', () => {
    state.filter = input.value;
    scroll.scrollTop = 0;
    focusIndex = 0;
    relist();
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowDown') {
      ev.preventDefault();
      focusRow(0);
    }
  });
  // The first draw assumes a window-high viewport; once in the page, the real height and scroll position take over.
  relist();
  requestAnimationFrame(() => {
    if (selected !== undefined && state.shown !== selected) {
      state.shown = selected;
      const top = focusIndex * ROW_H;
      if (top < scroll.scrollTop || top + ROW_H > scroll.scrollTop + scroll.clientHeight)
        scroll.scrollTop = Math.max(0, top - scroll.clientHeight / 2);
    }
    draw();
  });
  return h('div', { class: 'outline-pane' }, h('div', { class: 'filter-bar' }, input, summary), scroll);
}
