// A view's frame, drawn the moment its URL is opened and replaced once its data is read: the heading it will have and
// grey placeholders, so a slow read (the storage report of a large store) shows what is coming, not a blank page.
import { h } from './dom.js';
import type { Route } from './router.js';

function placeholderCards(n: number): HTMLElement {
  return h(
    'div',
    { class: 'cards' },
    ...Array.from({ length: n }, () =>
      h('div', { class: 'card placeholder' }, h('div', { class: 'big' }, '…'), h('span', { class: 'bone' })),
    ),
  );
}

/** The frame of a route's view, or undefined for a URL with no view. */
export function skeleton(route: Route): HTMLElement | undefined {
  const frame = (kind: string, title: string, reading: string, ...more: HTMLElement[]): HTMLElement =>
    h(
      'section',
      { class: 'skeleton', 'data-skeleton': kind, 'aria-busy': 'true' },
      h('h2', {}, title),
      ...more,
      h('p', { class: 'muted' }, reading),
    );
  switch (route.view) {
    case 'dbs':
      return frame('dbs', 'Databases', 'Reading the store…');
    case 'tree':
      return frame('tree', route.db, `Reading the branches of ${route.db}…`);
    case 'storage': {
      const scope = route.db ?? 'the store';
      return frame('storage', `Storage of ${scope}`, `Reading every object of ${scope}…`, placeholderCards(3));
    }
    case 'diff':
      return frame('diff', 'Diff', 'Reading both sides…');
    default:
      return undefined;
  }
}

/** Which frame a route draws: a branch opened in the tree on show, or a live redraw, keeps the view as it is. */
export function skeletonKey(route: Route): string {
  switch (route.view) {
    case 'tree':
      return `tree:${route.db}`;
    case 'storage':
      return `storage:${route.db ?? ''}`;
    case 'diff':
      return `diff:${route.query.toString()}`;
    default:
      return route.view;
  }
}
