// The dashboard on a database of 1,001 branches, in real headless chromium: it opens as the outline and draws a
// screenful of rows, not every branch; the filter keeps exact matches and their ancestors; collapse and expand hide
// and restore a subtree; scrolling and the keyboard bring later branches into the DOM.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { fork } from '../../src/ops/fork.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { Store } from '../../src/store/store.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import { browserMissing, launchBrowser, startUi, type UiProcess } from './ui-support.js';

const TOKEN = 'ui-many-token-0123456789abcdef01';
const skip = browserMissing();
const GROUPS = 10;
const ITEMS = 99;
const TOTAL = 1 + GROUPS + GROUPS * ITEMS;
const ROWS = '.outline .row[data-branch]';

const two = (n: number): string => String(n).padStart(2, '0');

// main → group-0..group-9 → g<k>-item-00..98, forked through the engine (no CLI process per branch).
async function manyBranches(s: StoreDir): Promise<void> {
  assert.equal(s.cli(['create', 'app']).code, 0);
  const ctx = makeContext(await Store.open(parseStoreSpec(s.store)), s.store, { warn: () => undefined });
  try {
    for (let g = 0; g < GROUPS; g++) {
      await fork(ctx, { db: 'app', branch: 'main' }, `group-${g}`, {});
      for (let i = 0; i < ITEMS; i++) await fork(ctx, { db: 'app', branch: `group-${g}` }, `g${g}-item-${two(i)}`, {});
    }
  } finally {
    await ctx.store.close();
  }
}

async function drawn(page: Page): Promise<string[]> {
  return page.$$eval(ROWS, (els) => els.map((e) => e.getAttribute('data-branch') ?? ''));
}

async function rowsShown(page: Page, n: number): Promise<void> {
  await page.waitForSelector(`.outline[data-rows="${n}"]`);
}

describe('the dashboard on 1,001 branches', { skip }, () => {
  let s: StoreDir;
  let ui: UiProcess;
  let browser: Browser;
  let page: Page;

  before(async () => {
    s = makeStoreDir();
    await manyBranches(s);
    ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  });

  after(async () => {
    await browser?.close();
    await ui?.stop();
    s?.cleanup();
  });

  test('opens as the outline and draws a bounded window of rows, not every branch', async () => {
    await page.goto(`${ui.url}db/app?token=${TOKEN}`);
    await rowsShown(page, TOTAL);
    assert.equal(await page.$('svg.tree g.node'), null, 'no graph box is drawn');
    const names = await drawn(page);
    assert.ok(names.length > 10 && names.length < 100, `a screenful of rows is drawn (${names.length})`);
    assert.deepEqual(names.slice(0, 3), ['main', 'group-0', 'g0-item-00'], 'depth-first, under the parent');
    assert.equal(await page.getAttribute('.row[data-branch="g0-item-00"]', 'aria-level'), '3');
    assert.equal(await page.$('.row[data-branch="g9-item-98"]'), null, 'the last branch is not drawn yet');
  });

  test('scrolling to the end brings the last branches into the DOM and keeps the window bounded', async () => {
    await page.$eval('.tree-scroll.outline', (el) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.waitForSelector('.row[data-branch="g9-item-98"]');
    assert.equal(await page.$('.row[data-branch="main"]'), null, 'the top scrolled out of the DOM');
    assert.ok((await drawn(page)).length < 100);
    await page.$eval('.tree-scroll.outline', (el) => {
      el.scrollTop = 0;
    });
    await page.waitForSelector('.row[data-branch="main"]');
  });

  test('the filter narrows to the exact matches plus their ancestors, and clearing it restores the tree', async () => {
    await page.fill('input.tree-filter', 'g3-item-07');
    await rowsShown(page, 3);
    assert.deepEqual(await drawn(page), ['main', 'group-3', 'g3-item-07']);
    assert.deepEqual(await page.$$eval('.row.match', (els) => els.map((e) => e.getAttribute('data-branch'))), [
      'g3-item-07',
    ]);
    await page.fill('input.tree-filter', 'ITEM-05');
    await rowsShown(page, 1 + 2 * GROUPS);
    const expected = ['main'];
    for (let g = 0; g < GROUPS; g++) expected.push(`group-${g}`, `g${g}-item-05`);
    assert.deepEqual(await drawn(page), expected, 'case-insensitive, each match under its own group');
    await page.fill('input.tree-filter', 'no-such-branch');
    await rowsShown(page, 0);
    assert.match((await page.textContent('.filter-count')) ?? '', /^0 matches/);
    await page.fill('input.tree-filter', '');
    await rowsShown(page, TOTAL);
  });

  test('collapse hides a subtree and expand restores it, by mouse and by keyboard', async () => {
    await page.click('button[data-toggle="group-0"]');
    await rowsShown(page, TOTAL - ITEMS);
    assert.equal(await page.$('.row[data-branch="g0-item-00"]'), null);
    assert.equal(await page.getAttribute('.row[data-branch="group-0"]', 'aria-expanded'), 'false');
    assert.deepEqual((await drawn(page)).slice(0, 3), ['main', 'group-0', 'group-1'], 'the next subtree moves up');
    await page.click('button[data-toggle="group-0"]');
    await rowsShown(page, TOTAL);
    await page.waitForSelector('.row[data-branch="g0-item-00"]');

    // Keyboard: focus main, Down to group-0, Left collapses it, Right expands it, Down walks into it, Enter opens.
    await page.focus('.row[data-branch="main"]');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.$eval(':focus', (e) => e.getAttribute('data-branch')), 'group-0');
    await page.keyboard.press('ArrowLeft');
    await rowsShown(page, TOTAL - ITEMS);
    assert.equal(await page.$eval(':focus', (e) => e.getAttribute('data-branch')), 'group-0');
    await page.keyboard.press('ArrowRight');
    await rowsShown(page, TOTAL);
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.$eval(':focus', (e) => e.getAttribute('data-branch')), 'g0-item-00');
    await page.keyboard.press('End');
    await page.waitForSelector('.row[data-branch="g9-item-98"]:focus');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.panel');
    assert.equal(new URL(page.url()).pathname, '/db/app/branch/g9-item-98');
  });

  test('a branch URL scrolls its row into view, selected, next to its panel', async () => {
    await page.goto(`${ui.url}db/app/branch/g5-item-50`);
    await page.waitForSelector('.row.selected[data-branch="g5-item-50"]');
    await page.waitForSelector('.panel[data-panel="g5-item-50"]');
    assert.equal(await page.getAttribute('.layout-switch a[data-layout="outline"]', 'aria-current'), 'true');
    assert.ok((await drawn(page)).length < 100);
  });

  test('storage lists the top 100 branches by pinned bytes, and the rest on request', async () => {
    await page.goto(`${ui.url}db/app/storage`);
    await page.waitForSelector('[data-live="connected"]');
    // Connecting redraws the view once (whatever changed before the stream looked): click after that redraw.
    await page.waitForSelector('body[data-rendered]:not([data-rendered="1"])');
    await page.waitForSelector('section.storage button.show-all');
    const rows = () => page.$$eval('section.storage table:first-of-type tbody tr', (trs) => trs.length);
    assert.equal(await rows(), 100);
    await page.click('button.show-all');
    await page.waitForSelector('section.storage button.show-all', { state: 'detached' });
    assert.equal(await rows(), TOTAL);
  });
});
