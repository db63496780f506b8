import { performance } from 'node:perf_hooks';
import { parseDuration } from '../src/core/duration.js';
import { fork } from '../src/ops/fork.js';
import { makeContext } from '../src/ops/helpers/context/context.js';
import { Store } from '../src/store/store.js';
import { parseStoreSpec } from '../src/store/store-spec.js';
import { makeStoreDir } from '../test/daemon/daemon-process.js';
import { browserMissing, launchBrowser, startUi } from '../test/ui/ui-support.js';
import { median, ms, printTable } from './measure.js';

const BRANCHES = Number(process.env.OFFSHOOT_BENCH_UI_BRANCHES ?? 1000);
const RUNS = 5;
const TOKEN = 'ui-bench-token-0123456789abcdef';

/** The one DOM call the render waits make (the bench type-checks without DOM globals). */
interface ParentNodeLike {
  querySelectorAll(selector: string): { length: number };
}

/** The branch whose panel the click opens: the first fork, a row of the outline's first screenful. */
const CLICKED = 'attempt-0001';

// Median time from a click on a drawn outline row until its branch panel is drawn, the outline already on show.
async function panelClick(browser: Awaited<ReturnType<typeof launchBrowser>>, url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForSelector(`.row[data-branch="${CLICKED}"]`, { timeout: 300_000 });
    // The page reads the view again once its event stream opens; the click is measured after that.
    await page.waitForSelector('body[data-rendered="2"]', { timeout: 300_000 });
    const t0 = performance.now();
    await page.click(`.row[data-branch="${CLICKED}"] a.name`);
    await page.waitForSelector(`.panel[data-panel="${CLICKED}"]`, { timeout: 300_000 });
    times.push(performance.now() - t0);
    await context.close();
  }
  return median(times);
}

// Median time from navigation until `drawn` holds in the page, over RUNS fresh browser contexts.
async function firstRender(
  browser: Awaited<ReturnType<typeof launchBrowser>>,
  url: string,
  drawn: (n: number) => boolean,
): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(url);
    await page.waitForFunction(drawn, BRANCHES, { timeout: 300_000 });
    times.push(performance.now() - t0);
    await context.close();
  }
  return median(times);
}

// Median latency of one JSON API call.
async function apiTime(url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await r.json();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/**
 * The dashboard on a store with 1,000 branches (a tree: each fork from main or from an earlier fork, every third with
 * a TTL): the tree, storage and branch-detail APIs' latency, the first render in chromium from navigation to the
 * outline's first screenful drawn, and a branch click until its panel is drawn, against the baseline of the laid-out
 * graph with every node drawn (?layout=graph).
 */
export async function uiBench(): Promise<void> {
  const missing = browserMissing();
  if (missing !== undefined) {
    console.log(`\nui: skipped (${missing})`);
    return;
  }
  const s = makeStoreDir();
  try {
    if (s.cli(['create', 'app']).code !== 0) throw new Error('create failed');
    const ctx = makeContext(await Store.open(parseStoreSpec(s.store)), s.store, { warn: () => undefined });
    const names = ['main'];
    // A fixed pseudo-random parent per fork (an LCG), so the tree has depth as well as breadth and every run is alike.
    let seed = 7;
    for (let i = 1; i < BRANCHES; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const from = names[seed % names.length] ?? 'main';
      const name = `attempt-${String(i).padStart(4, '0')}`;
      await fork(
        ctx,
        { db: 'app', branch: from },
        name,
        i % 3 === 0 ? { ttl: { kind: 'set', ttl: parseDuration('2h') } } : {},
      );
      names.push(name);
    }
    await ctx.store.close();
    const ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
    const browser = await launchBrowser();
    try {
      const tree = await apiTime(`${ui.url}api/dbs/app/tree`);
      const storage = await apiTime(`${ui.url}api/storage`);
      const detail = await apiTime(`${ui.url}api/dbs/app/branches/${CLICKED}?children=0`);
      const detailAll = await apiTime(`${ui.url}api/dbs/app/branches/${CLICKED}`);
      // The predicates run in the page, so each names the page's document itself.
      const outline = await firstRender(
        browser,
        `${ui.url}db/app?token=${TOKEN}`,
        (n) =>
          (globalThis as unknown as { document: ParentNodeLike }).document.querySelectorAll(
            `.outline[data-rows="${n}"] .row`,
          ).length > 0,
      );
      const click = await panelClick(browser, `${ui.url}db/app?token=${TOKEN}`);
      const graph = await firstRender(
        browser,
        `${ui.url}db/app?layout=graph&token=${TOKEN}`,
        (n) =>
          (globalThis as unknown as { document: ParentNodeLike }).document.querySelectorAll('svg.tree g.node')
            .length === n,
      );
      printTable(
        `ui: dashboard on ${BRANCHES} branches (median of ${RUNS})`,
        ['measure', 'time'],
        [
          ['GET /api/dbs/app/tree', ms(tree)],
          ['GET /api/storage', ms(storage)],
          ['GET /api/dbs/app/branches/:b?children=0 (what the panel asks)', ms(detail)],
          ['GET /api/dbs/app/branches/:b (with children: every ref)', ms(detailAll)],
          ['first render, outline (navigate → first screenful of rows)', ms(outline)],
          ['branch click → its panel drawn (outline on show)', ms(click)],
          ['baseline: graph layout (navigate → every node drawn)', ms(graph)],
        ],
      );
    } finally {
      await browser.close();
      await ui.stop();
    }
  } finally {
    s.cleanup();
  }
}
