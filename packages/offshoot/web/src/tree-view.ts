// The drawn branch tree of one database: dagre lays out branches (nodes) and fork/promote/undo edges; the page
// draws them as SVG, checkpoints as points along each branch's own txid line.
import { Graph, layout } from '@dagrejs/dagre';
import type { ApiBranch, ApiEdge, ApiTree } from '../../src/ui/api-types.js';
import { h, s } from './dom.js';
import { bytes, countdown } from './format.js';
import { navigate, treeUrl } from './router.js';

const NODE_W = 232;
const NODE_H = 100;
const PAD = 24;
/** About the width of one character of a checkpoint label (10px sans-serif). */
const CP_CHAR_W = 5.6;

function badges(b: ApiBranch): string[] {
  const out: string[] = [b.state, b.storage];
  if (b.protected) out.push('protected');
  if (b.ephemeral) out.push('ephemeral');
  if (b.undo !== undefined) out.push(b.undo.kind);
  return out;
}

/** A branch's TTL line (its countdown), or undefined when it has no TTL or is protected. */
export function ttlText(b: ApiBranch, now: number): string | undefined {
  if (b.ttl === undefined || b.protected) return undefined;
  if (b.expires_at === undefined) return `ttl ${b.ttl}`;
  const left = countdown(b.expires_at, now);
  return left === 'expired' ? 'expired · not reaped yet' : `ttl ${b.ttl} · ${left} left`;
}

function sessionText(b: ApiBranch): string | undefined {
  const ss = b.session;
  if (ss === undefined) return undefined;
  const err = ss.error ?? ss.flush_error;
  return `session · durable@${ss.durable_txid} · lag ${bytes(ss.capture_lag_bytes)}${err ? ' · error' : ''}`;
}

/** The label of the checkpoints at one point: their names, or the first and how many more when they run long. */
function checkpointLabel(names: readonly string[]): string {
  const all = names.join(', ');
  return all.length <= 28 || names.length === 1 ? all : `${names[0]} +${names.length - 1}`;
}

function drawNode(db: string, b: ApiBranch, x: number, y: number, selected: boolean, now: number): SVGGElement {
  const left = x - NODE_W / 2;
  const top = y - NODE_H / 2;
  const classes = ['node', `state-${b.state}`, `storage-${b.storage}`];
  if (b.reads_shared === true) classes.push('reads-shared');
  if (b.protected) classes.push('protected');
  if (b.ephemeral) classes.push('ephemeral');
  if (b.undo !== undefined) classes.push('undo');
  if (b.expired) classes.push('expired');
  if (b.session !== undefined) classes.push('has-session');
  if (selected) classes.push('selected');
  const g = s('g', {
    class: classes.join(' '),
    'data-branch': b.branch,
    'data-state': b.state,
    'data-head': b.head_txid,
    'data-storage': b.storage,
    'data-expired': b.expired ? 'true' : 'false',
    tabindex: 0,
    role: 'link',
    onclick: () => navigate(treeUrl(db, b.branch)),
    onkeydown: (ev: Event) => {
      if ((ev as KeyboardEvent).key === 'Enter') navigate(treeUrl(db, b.branch));
    },
  });
  g.append(s('title', {}, `${db}@${b.branch}`));
  g.append(s('rect', { x: left, y: top, width: NODE_W, height: NODE_H, rx: 8, class: 'box' }));
  g.append(
    s(
      'text',
      { x: left + 10, y: top + 19, class: 'name' },
      b.branch.length > 24 ? `${b.branch.slice(0, 23)}…` : b.branch,
    ),
  );
  g.append(
    s('text', { x: left + NODE_W - 10, y: top + 19, class: 'head', 'text-anchor': 'end' }, `txid ${b.head_txid}`),
  );
  let bx = left + 10;
  for (const label of badges(b)) {
    const w = label.length * 6.4 + 10;
    g.append(s('rect', { x: bx, y: top + 27, width: w, height: 15, rx: 7, class: `badge badge-${label}` }));
    g.append(s('text', { x: bx + w / 2, y: top + 38, class: 'badge-text', 'text-anchor': 'middle' }, label));
    bx += w + 4;
  }
  const line = sessionText(b) ?? ttlText(b, now);
  if (line !== undefined) {
    const t = s('text', { x: left + 10, y: top + 57, class: b.expired ? 'sub warn' : 'sub' }, line);
    if (b.expires_at !== undefined && b.session === undefined) t.setAttribute('data-ttl', b.branch);
    g.append(t);
  }
  // Checkpoints as points along the branch's own history, from its first checkpoint to its head.
  const y0 = top + NODE_H - 14;
  const x0 = left + 14;
  const x1 = left + NODE_W - 14;
  g.append(s('line', { x1: x0, y1: y0, x2: x1, y2: y0, class: 'timeline' }));
  const lo = Math.min(b.parent?.txid ?? b.head_txid, ...b.checkpoints.map((c) => c.txid));
  const span = Math.max(1, b.head_txid - lo);
  // Checkpoints at one txid share a point, so they share one label naming them all.
  const byTxid = new Map<number, string[]>();
  for (const c of b.checkpoints) byTxid.set(c.txid, [...(byTxid.get(c.txid) ?? []), c.name]);
  // A label that would run into the one before it is left out (its dots keep their names as tooltips).
  let lastEnd = Number.NEGATIVE_INFINITY;
  for (const [txid, names] of byTxid) {
    const cx = x0 + ((txid - lo) / span) * (x1 - x0);
    const label = checkpointLabel(names);
    const atEnd = cx > x1 - 30;
    const width = label.length * CP_CHAR_W;
    const start = atEnd ? cx - width : cx;
    if (start >= lastEnd + 6) {
      g.append(s('text', { x: cx, y: y0 - 8, class: 'cp-label', 'text-anchor': atEnd ? 'end' : 'start' }, label));
      lastEnd = start + width;
    }
  }
  for (const c of b.checkpoints) {
    const cx = x0 + ((c.txid - lo) / span) * (x1 - x0);
    const dot = s('circle', {
      cx,
      cy: y0,
      r: 4.5,
      class: 'checkpoint',
      'data-checkpoint': c.name,
      'data-txid': c.txid,
    });
    dot.append(s('title', {}, `${c.name} @ txid ${c.txid}${c.meta ? ` ${JSON.stringify(c.meta)}` : ''}`));
    g.append(dot);
  }
  g.append(s('circle', { cx: x1, cy: y0, r: 3, class: 'headpoint' }));
  return g;
}

function edgeLabel(e: ApiEdge): string {
  return e.kind === 'undo' ? `undo point @${e.txid}` : `${e.kind} @${e.txid}`;
}

/** Lays out and draws a database's tree; clicking a branch opens its panel (its own URL). */
export function treeSvg(tree: ApiTree, selected?: string): SVGSVGElement {
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 26, ranksep: 90, marginx: PAD, marginy: PAD });
  g.setDefaultEdgeLabel(() => ({}));
  for (const b of tree.branches) g.setNode(b.branch, { width: NODE_W, height: NODE_H });
  // A promote points back at the source the target was forked from; laid out source-to-target it would close a
  // cycle and turn the tree around, so it is laid out like a fork and drawn reversed.
  const ends = (e: ApiEdge): [string, string] => (e.kind === 'promote' ? [e.to, e.from] : [e.from, e.to]);
  const name = (e: ApiEdge): string => `${e.kind}:${e.from}:${e.to}`;
  for (const e of tree.edges) {
    const [v, w] = ends(e);
    const label = edgeLabel(e);
    g.setEdge(v, w, { label, width: label.length * 6.5, height: 14, labelpos: 'c' }, name(e));
  }
  layout(g);
  const graph = g.graph();
  const width = Math.max(graph.width ?? 0, NODE_W + 2 * PAD);
  const height = Math.max(graph.height ?? 0, NODE_H + 2 * PAD);
  const svg = s('svg', {
    class: 'tree',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': `branch tree of ${tree.db}`,
  });
  svg.append(
    s(
      'defs',
      {},
      ...(['fork', 'promote', 'undo'] as const).map((k) =>
        s(
          'marker',
          {
            id: `arrow-${k}`,
            viewBox: '0 0 10 10',
            refX: 9,
            refY: 5,
            markerWidth: 7,
            markerHeight: 7,
            orient: 'auto-start-reverse',
          },
          s('path', { d: 'M0,0 L10,5 L0,10 z', class: `arrow arrow-${k}` }),
        ),
      ),
    ),
  );
  const edges = s('g', { class: 'edges' });
  for (const e of tree.edges) {
    const [v, w] = ends(e);
    const pts = g.edge(v, w, name(e)) as { points: Array<{ x: number; y: number }>; x: number; y: number };
    const points = e.kind === 'promote' ? [...pts.points].reverse() : pts.points;
    const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
    edges.append(
      s('path', {
        d,
        class: `edge edge-${e.kind}`,
        'data-from': e.from,
        'data-to': e.to,
        'data-kind': e.kind,
        'data-txid': e.txid,
        'marker-end': `url(#arrow-${e.kind})`,
      }),
    );
    edges.append(
      s(
        'text',
        { x: pts.x, y: pts.y - 4, class: `edge-label edge-label-${e.kind}`, 'text-anchor': 'middle' },
        edgeLabel(e),
      ),
    );
  }
  svg.append(edges);
  const nodes = s('g', { class: 'nodes' });
  const now = Date.now();
  for (const b of tree.branches) {
    const n = g.node(b.branch) as { x: number; y: number };
    nodes.append(drawNode(tree.db, b, n.x, n.y, b.branch === selected, now));
  }
  svg.append(nodes);
  return svg;
}

/** Rewrites every TTL countdown in place, once a second, without a refetch. */
export function tickCountdowns(root: ParentNode, tree: ApiTree): void {
  const now = Date.now();
  const byName = new Map(tree.branches.map((b) => [b.branch, b]));
  for (const el of root.querySelectorAll<SVGElement | HTMLElement>('[data-ttl]')) {
    const b = el.dataset.ttl === undefined ? undefined : byName.get(el.dataset.ttl);
    if (b === undefined) continue;
    const text = ttlText(b, now);
    if (text !== undefined && el.textContent !== text) {
      el.textContent = text;
      el.classList.toggle('warn', text.startsWith('expired'));
    }
  }
}

/** The legend under the tree. */
export function legend(): HTMLElement {
  return h(
    'p',
    { class: 'legend muted' },
    'Arrows: fork (child made from parent at txid) · promote (target now reads the source) · undo point (old head kept by a rollback or promote). ',
    'Dots: named checkpoints along each branch. Dotted box: an ephemeral branch, held by this daemon and gone with it unless kept. Dashed box: reads objects another branch here reads too (a shared fork, or a promote target while its source is here); solid: reads only objects no other branch here reads.',
  );
}
