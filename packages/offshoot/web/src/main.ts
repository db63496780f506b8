// The dashboard page: a header, one view per URL, and live refreshes when a daemon serves it.
import type {
  ApiBranchDetail,
  ApiDbs,
  ApiDiff,
  ApiMerge,
  ApiSeries,
  ApiServer,
  ApiStorage,
  ApiTree,
} from '../../src/ui/api-types.js';
import { ApiFailure, get, seg } from './api.js';
import { branchPanel } from './branch-panel.js';
import { diffView } from './diff-view.js';
import { h } from './dom.js';
import { mergeSides } from './merge-view.js';
import { count } from './format.js';
import { follow } from './live.js';
import { navigate, parseRoute, startRouter, type TreeLayout, treeUrl } from './router.js';
import { skeleton, skeletonKey } from './skeleton.js';
import { storageView } from './storage-view.js';
import { treeOutline } from './tree-outline.js';
import { legend, tickCountdowns, treeSvg } from './tree-view.js';

/** Above this many branches a tree opens as the outline: a laid-out graph of every branch is slow to draw and read. */
const GRAPH_LIMIT = 200;

const view = document.getElementById('view') as HTMLElement;
const top = document.getElementById('top') as HTMLElement;
let server: ApiServer | undefined;
let liveState: 'off' | 'connected' | 'reconnecting' = 'off';
let ticking: ReturnType<typeof setInterval> | undefined;
let generation = 0;
// The frame key (skeleton.ts) of the view last drawn from its data: a URL with another key is framed at once.
let shown: string | undefined;
let lastTree: { sig: string; el: HTMLElement; drawing: Element; tree: ApiTree } | undefined;
// The storage view last drawn, and what it was drawn from.
let lastStorage: { sig: string; el: HTMLElement } | undefined;
// The last read of a tree, done or still under way, kept until an event, a reconnect or the refresh button says the
// store may have changed: opening a branch of the tree on show reads only that branch, not every branch again.
let treeRead: { db: string; tree: Promise<ApiTree> } | undefined;

function readTree(db: string): Promise<ApiTree> {
  if (treeRead?.db !== db) {
    const read = { db, tree: get<ApiTree>(`/api/dbs/${seg(db)}/tree`) };
    treeRead = read;
    // A failed read is not kept: the next render asks again.
    read.tree.catch(() => {
      if (treeRead === read) treeRead = undefined;
    });
  }
  return treeRead.tree;
}
const layoutChoice = new Map<string, TreeLayout>();

function layoutSwitch(db: string, branch: string | undefined, current: TreeLayout): HTMLElement {
  return h(
    'span',
    { class: 'layout-switch' },
    ...(['graph', 'outline'] as const).map((l) =>
      h(
        'a',
        {
          href: `${treeUrl(db, branch)}?layout=${l}`,
          'data-nav': true,
          class: 'layout-opt',
          'data-layout': l,
          'aria-current': l === current ? 'true' : undefined,
        },
        l,
      ),
    ),
  );
}

function header(): void {
  const route = parseRoute();
  const db = route.view === 'tree' || route.view === 'storage' ? route.db : undefined;
  const status =
    server === undefined
      ? ''
      : liveState === 'reconnecting'
        ? 'reconnecting…'
        : server.live
          ? 'live'
          : liveState === 'connected'
            ? 'at rest · following'
            : 'at rest';
  top.replaceChildren(
    h('a', { href: '/', 'data-nav': true, class: 'brand' }, 'offshoot'),
    h(
      'nav',
      {},
      h('a', { href: '/', 'data-nav': true }, 'databases'),
      db ? h('a', { href: treeUrl(db), 'data-nav': true }, `${db} tree`) : null,
      h('a', { href: db ? `/db/${seg(db)}/storage` : '/storage', 'data-nav': true }, 'storage'),
      h('a', { href: '/diff', 'data-nav': true }, 'diff'),
    ),
    h('span', { class: `live-state ${liveState}`, 'data-live': liveState, 'data-mode': server?.mode ?? '' }, status),
  );
  if (server)
    top.append(
      h(
        'span',
        { class: 'store muted' },
        `${server.store} · v${server.version}`,
        server.live
          ? null
          : h('button', { type: 'button', class: 'refresh', onclick: () => void render(true) }, 'refresh'),
      ),
    );
}

function failure(err: unknown): HTMLElement {
  if (err instanceof ApiFailure) {
    return h(
      'div',
      { class: 'error', 'data-error': err.body?.code ?? String(err.status) },
      h('strong', {}, err.message),
      err.body?.hint ? h('p', {}, err.body.hint) : null,
    );
  }
  return h('div', { class: 'error' }, h('strong', {}, String(err)));
}

async function renderRoute(): Promise<HTMLElement> {
  const route = parseRoute();
  switch (route.view) {
    case 'dbs': {
      const d = await get<ApiDbs>('/api/dbs');
      server = d.server;
      const only = d.dbs[0];
      if (d.dbs.length === 1 && only !== undefined) {
        navigate(treeUrl(only.name), true);
        return h('p', { class: 'muted' }, 'Opening…');
      }
      return h(
        'section',
        {},
        h('h2', {}, `Databases (${d.dbs.length})`),
        d.dbs.length === 0 ? h('p', { class: 'muted' }, 'No databases yet: offshoot create NAME --from FILE.db') : null,
        h(
          'ul',
          { class: 'db-list' },
          ...d.dbs.map((x) =>
            h(
              'li',
              {},
              h('a', { href: treeUrl(x.name), 'data-nav': true, 'data-db': x.name }, x.name),
              ` · ${count(x.branches, 'branch', 'branches')}${x.sessions > 0 ? ` · ${count(x.sessions, 'open session')}` : ''}`,
            ),
          ),
        ),
      );
    }
    case 'tree': {
      // The panel's children come from the tree's edges, so its detail is asked without them (one branch's refs).
      const [tree, detail] = await Promise.all([
        readTree(route.db),
        route.branch !== undefined
          ? get<ApiBranchDetail>(`/api/dbs/${seg(route.db)}/branches/${seg(route.branch)}?children=0`)
          : undefined,
      ]);
      if (route.layout !== undefined) layoutChoice.set(route.db, route.layout);
      server = tree.server;
      // An event that changed nothing this view shows (another database, a ref-change notice for a flush already
      // drawn) keeps the drawing as it is: no second layout, no flicker.
      // Fields that move with the clock alone are left out; the countdowns tick in place.
      const sig = JSON.stringify(
        [
          route,
          layoutChoice.get(route.db),
          tree.branches,
          tree.edges,
          detail?.branch,
          detail?.chain,
          detail?.ref,
          detail?.history.records.at(-1)?.seq,
        ],
        (k, v) => (k === 'remaining' || k === 'durable_age' ? undefined : v),
      );
      if (lastTree?.sig === sig) {
        const same = lastTree;
        ticking = setInterval(() => tickCountdowns(same.drawing, same.tree), 1000);
        return same.el;
      }
      const layout = layoutChoice.get(route.db) ?? (tree.branches.length > GRAPH_LIMIT ? 'outline' : 'graph');
      const drawing =
        layout === 'outline'
          ? treeOutline(tree, route.branch)
          : h('div', { class: 'tree-scroll', 'data-tree': route.db }, treeSvg(tree, route.branch));
      const sessions = tree.branches.filter((b) => b.session !== undefined).length;
      const wrap = h(
        'div',
        { class: 'tree-layout' },
        h(
          'section',
          { class: 'tree-pane' },
          h(
            'h2',
            {},
            route.db,
            h(
              'span',
              { class: 'muted' },
              ` · ${count(tree.branches.length, 'branch', 'branches')} · ${count(tree.edges.length, 'edge')}${sessions > 0 ? ` · ${count(sessions, 'open session')}` : ''}`,
            ),
            layoutSwitch(route.db, route.branch, layout),
          ),
          drawing,
          layout === 'graph' ? legend() : null,
        ),
        detail
          ? branchPanel(
              detail,
              tree.edges.filter((e) => e.from === detail.branch.branch),
            )
          : null,
      );
      ticking = setInterval(() => tickCountdowns(drawing, tree), 1000);
      lastTree = { sig, el: wrap, drawing, tree };
      return wrap;
    }
    case 'storage': {
      const st = await get<ApiStorage>(route.db ? `/api/dbs/${seg(route.db)}/storage` : '/api/storage');
      server = st.server;
      const series = server.live ? await get<ApiSeries>('/api/metrics/series') : undefined;
      // A redraw that would draw the same keeps the drawing: no flicker, and a click that lands mid-redraw (its
      // press on one button, its release on its replacement) is not lost.
      const sig = JSON.stringify([route, st, series], (k, v) => (k === 'server' ? undefined : v));
      if (lastStorage?.sig === sig) return lastStorage.el;
      lastStorage = { sig, el: storageView(st, series) };
      return lastStorage.el;
    }
    case 'diff': {
      const q = route.query;
      if (!q.get('left') || !q.get('right')) {
        server = (await get<ApiDbs>('/api/dbs')).server;
        return diffView(q, undefined);
      }
      const d = await get<ApiDiff>(`/api/diff?${q.toString()}`);
      server = d.server;
      const sides = q.get('merge') === '1' ? mergeSides(d.left, d.right) : undefined;
      const merge = sides === undefined ? undefined : await get<ApiMerge>(`/api/merge?${new URLSearchParams(sides)}`);
      return diffView(q, d, merge);
    }
    default:
      return h('div', { class: 'error' }, `No view at ${route.path}.`);
  }
}

/** Renders the current URL's view (`fresh`: reading the tree again); a newer render makes an older one's result moot. */
async function render(fresh = false): Promise<void> {
  const mine = ++generation;
  if (fresh) treeRead = undefined;
  clearInterval(ticking);
  const key = skeletonKey(parseRoute());
  if (key !== shown) {
    const frame = skeleton(parseRoute());
    if (frame !== undefined) view.replaceChildren(frame);
    header();
  }
  let el: HTMLElement;
  try {
    el = await renderRoute();
  } catch (err) {
    el = failure(err);
  }
  if (mine !== generation) return;
  const scroll = view.querySelector('.tree-scroll');
  const pos = scroll ? { left: scroll.scrollLeft, top: scroll.scrollTop } : undefined;
  // A live redraw while the reader types in the filter box keeps the caret there.
  const typing = document.activeElement?.classList.contains('tree-filter') === true;
  if (view.firstChild !== el) view.replaceChildren(el);
  shown = key;
  if (typing) view.querySelector<HTMLInputElement>('.tree-filter')?.focus();
  const next = view.querySelector('.tree-scroll');
  if (pos && next) {
    next.scrollLeft = pos.left;
    next.scrollTop = pos.top;
  }
  header();
  document.body.dataset.rendered = String(mine);
  startLive();
}

let liveStarted = false;
let pending: ReturnType<typeof setTimeout> | undefined;

// The stream starts once the first view is drawn, so its watcher's first look at every ref does not slow that view;
// each time it opens the view is read again, for whatever changed before the watcher looked.
function startLive(): void {
  if (liveStarted || server === undefined) return;
  liveStarted = true;
  follow(
    (ev) => {
      document.body.dataset.lastEvent = ev.type;
      if (ev.type !== 'refs_changed')
        document.body.dataset.daemonEvents = `${document.body.dataset.daemonEvents ?? ''} ${ev.type}`.trim();
      clearTimeout(pending);
      pending = setTimeout(() => void render(true), 100);
    },
    (connected) => {
      liveState = connected ? 'connected' : 'reconnecting';
      header();
      if (connected) void render(true);
    },
  );
}

startRouter(() => void render());
void render();
