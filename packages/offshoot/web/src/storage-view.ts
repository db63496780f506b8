// Storage: bytes per database and lineage, what each branch pins, what GC would reclaim, and (with a daemon) a
// small time series of flushes, forks, GC passes and reaps.
import type { ApiSample, ApiSeries, ApiStorage } from '../../src/ui/api-types.js';
import { h, s, table } from './dom.js';
import { bytes, count } from './format.js';
import { treeUrl } from './router.js';

function bar(part: number, whole: number): HTMLElement {
  const pct = whole > 0 ? Math.max(1, Math.round((part / whole) * 100)) : 0;
  const fill = h('span', { class: 'fill' });
  // Set through the CSSOM: the page's CSP allows no inline style attributes.
  fill.style.width = `${pct}%`;
  return h('span', { class: 'bar' }, fill);
}

function sparkline(samples: ApiSample[], field: 'flushes' | 'forks' | 'gc_passes' | 'reaped'): SVGSVGElement {
  const w = 240;
  const hgt = 40;
  const max = Math.max(1, ...samples.map((x) => x[field]));
  const step = samples.length > 0 ? w / samples.length : w;
  const svg = s('svg', { width: w, height: hgt, class: 'spark', 'data-series': field });
  samples.forEach((x, i) => {
    const bh = (x[field] / max) * (hgt - 2);
    svg.append(s('rect', { x: i * step, y: hgt - bh, width: Math.max(1, step - 1), height: bh }));
  });
  return svg;
}

/** Branches listed before "show all": a table of thousands of rows is slow to draw and rarely read past the top. */
const TOP_BRANCHES = 100;

// Once the reader asked for every branch, live redraws keep showing every branch.
let showAll = false;

// What each branch pins, most bytes first: the top TOP_BRANCHES, and a button that draws the rest on request.
function pinTable(st: ApiStorage): DocumentFragment {
  const sorted = [...st.branches].sort((a, b) => b.pinned_bytes - a.pinned_bytes);
  const draw = (n: number): HTMLTableElement =>
    table(
      ['branch', 'objects', 'pinned', 'only this branch', ''],
      sorted
        .slice(0, n)
        .map((b) => [
          h('a', { href: treeUrl(b.db, b.branch), 'data-nav': true }, `${b.db}@${b.branch}`),
          b.pinned_objects,
          bytes(b.pinned_bytes),
          bytes(b.unique_bytes),
          bar(b.pinned_bytes, st.total_bytes),
        ]),
    );
  const shown = draw(showAll ? sorted.length : TOP_BRANCHES);
  const out = document.createDocumentFragment();
  out.append(shown);
  if (!showAll && sorted.length > TOP_BRANCHES) {
    const more = h(
      'button',
      { type: 'button', class: 'show-all' },
      `show all ${sorted.length} branches (the top ${TOP_BRANCHES} by pinned bytes are shown)`,
    );
    more.addEventListener('click', () => {
      showAll = true;
      shown.replaceWith(draw(sorted.length));
      more.remove();
    });
    out.append(more);
  }
  return out;
}

/** Renders the storage view; `series` only when a daemon serves the page. */
export function storageView(st: ApiStorage, series: ApiSeries | undefined): HTMLElement {
  const scope = st.db === undefined ? 'the store' : st.db;
  return h(
    'section',
    { class: 'storage' },
    h('h2', {}, `Storage of ${scope}`),
    h(
      'div',
      { class: 'cards' },
      h('div', { class: 'card' }, h('div', { class: 'big' }, bytes(st.total_bytes)), 'in the whole store'),
      ...st.dbs.map((d) =>
        h(
          'div',
          { class: 'card' },
          h('div', { class: 'big' }, bytes(d.bytes)),
          h('a', { href: treeUrl(d.db), 'data-nav': true }, d.db),
          ` · ${count(d.branches, 'branch', 'branches')}`,
        ),
      ),
      h(
        'div',
        // Only bytes waiting for GC are drawn in the warning colour: nothing to reclaim is nothing to act on.
        {
          class: st.reclaimable.bytes > 0 ? 'card reclaim pending' : 'card reclaim',
          'data-reclaimable': st.reclaimable.bytes,
        },
        h('div', { class: 'big' }, bytes(st.reclaimable.bytes)),
        `GC would reclaim (${count(st.reclaimable.objects, 'object')}, after the grace period)`,
      ),
      h(
        'div',
        { class: 'card layout', 'data-layout': st.layout.version },
        h('div', { class: 'big' }, `layout ${st.layout.version}`),
        st.layout.upgrade === undefined ? st.layout.allows : `${st.layout.allows}. ${st.layout.upgrade}`,
      ),
    ),
    h('h3', {}, 'What each branch pins'),
    pinTable(st),
    h('h3', {}, 'Lineages'),
    table(
      ['lineage', 'databases', 'objects', 'bytes', 'live', ''],
      st.lineages.map((l) => [
        l.lineage,
        l.dbs.join(', ') || '(none: garbage)',
        l.objects,
        bytes(l.bytes),
        bytes(l.live_bytes),
        bar(l.bytes, st.total_bytes),
      ]),
    ),
    series
      ? h(
          'section',
          { class: 'series' },
          h('h3', {}, `Daemon activity (per ${series.interval_seconds}s, last ${series.samples.length} samples)`),
          h(
            'div',
            { class: 'cards' },
            ...(['flushes', 'forks', 'gc_passes', 'reaped'] as const).map((f) =>
              h(
                'div',
                { class: 'card' },
                sparkline(series.samples, f),
                `${f.replace('_', ' ')}: ${series.samples.reduce((a, x) => a + x[f], 0)}`,
              ),
            ),
          ),
        )
      : h(
          'p',
          { class: 'muted' },
          'Served from a store at rest: run offshoot serve -http ADDR -ui for daemon activity.',
        ),
  );
}
