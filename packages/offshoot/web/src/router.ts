// Every view has its own URL: /, /db/<db>, /db/<db>/branch/<b>, /db/<db>/storage, /storage, /diff?left=&right=.
// A tree URL may carry ?layout=graph or ?layout=outline to pick how the branches are drawn.

/** How a tree is drawn: the laid-out graph, or the outline that scales to thousands of branches. */
export type TreeLayout = 'graph' | 'outline';

/** A parsed view URL. */
export type Route =
  | { view: 'dbs' }
  | { view: 'tree'; db: string; branch?: string; layout?: TreeLayout }
  | { view: 'storage'; db?: string }
  | { view: 'diff'; query: URLSearchParams }
  | { view: 'missing'; path: string };

/** Parses the current location into a route. */
export function parseRoute(loc: Location = location): Route {
  const parts = loc.pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  if (parts.length === 0) return { view: 'dbs' };
  if (parts[0] === 'diff' && parts.length === 1) return { view: 'diff', query: new URLSearchParams(loc.search) };
  if (parts[0] === 'storage' && parts.length === 1) return { view: 'storage' };
  if (parts[0] === 'db' && parts[1] !== undefined) {
    const l = new URLSearchParams(loc.search).get('layout');
    const layout = l === 'graph' || l === 'outline' ? { layout: l as TreeLayout } : {};
    if (parts.length === 2) return { view: 'tree', db: parts[1], ...layout };
    if (parts.length === 3 && parts[2] === 'storage') return { view: 'storage', db: parts[1] };
    if (parts.length === 4 && parts[2] === 'branch' && parts[3] !== undefined)
      return { view: 'tree', db: parts[1], branch: parts[3], ...layout };
  }
  return { view: 'missing', path: loc.pathname };
}

/** The URL of a database's tree, or of one branch in it. */
export function treeUrl(db: string, branch?: string): string {
  const base = `/db/${encodeURIComponent(db)}`;
  return branch === undefined ? base : `${base}/branch/${encodeURIComponent(branch)}`;
}

/** The URL of the diff between two targets. */
export function diffUrl(left: string, right: string, extra: Record<string, string> = {}): string {
  return `/diff?${new URLSearchParams({ left, right, ...extra }).toString()}`;
}

let onChange: () => void = () => undefined;

/** Goes to a URL without a reload (or replaces the current entry). */
export function navigate(url: string, replace = false): void {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  onChange();
}

/** Routes in-page links (`<a data-nav>`) and back/forward through `render`. */
export function startRouter(render: () => void): void {
  onChange = render;
  window.addEventListener('popstate', render);
  document.addEventListener('click', (ev) => {
    const a = (ev.target as Element | null)?.closest?.('a[data-nav]');
    if (!(a instanceof HTMLAnchorElement) || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    navigate(a.getAttribute('href') ?? '/');
  });
}
