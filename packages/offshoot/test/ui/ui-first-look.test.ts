// What a newcomer sees first, in real headless chromium against `offshoot ui` at rest: a view drawn at once while its
// data is read, checkpoints that share a txid all labelled, a promote target drawn dashed only while it reads objects
// another branch reads too, the next commands above the storage internals, counts in the singular, and nothing to
// reclaim shown as nothing to worry about.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page, Route } from 'playwright-core';
import { runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import { browserMissing, launchBrowser, screenshotPath, startUi, type UiProcess } from './ui-support.js';

const TOKEN = 'ui-first-look-token-0123456789abcd';
const skip = browserMissing();

function cli(s: StoreDir, args: string[]): string {
  const r = s.cli(args);
  assert.equal(r.code, 0, `offshoot ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The page's `getComputedStyle` (the test's own types have no DOM). */
type Styled = { getComputedStyle(el: unknown): { strokeDasharray: string; color: string } };

/** The computed `stroke-dasharray` of a branch's box in the drawn tree: `none` for a solid box. */
function dashOf(page: Page, branch: string): Promise<string> {
  return page.$eval(
    `g.node[data-branch="${branch}"] rect.box`,
    (el) => (globalThis as unknown as Styled).getComputedStyle(el).strokeDasharray,
  );
}

describe('a first look at the dashboard', { skip }, () => {
  let s: StoreDir;
  let ui: UiProcess;
  let browser: Browser;
  let page: Page;

  before(async () => {
    s = makeStoreDir();
    const seed = s.file('seed.db');
    runSql(seed, "create table items(id integer primary key, name text); insert into items(name) values ('apple');");
    cli(s, ['create', 'app', '--from', seed]);
    cli(s, ['fork', 'app', 'attempt']);
    runSql(cli(s, ['checkout', 'app@attempt']), "insert into items(name) values ('pear')");
    // Two names for one state: the second checkpoint finds nothing new and lands on the same txid.
    cli(s, ['checkpoint', 'app@attempt', 'fixed']);
    cli(s, ['checkpoint', 'app@attempt', 'tests-pass']);
    cli(s, ['promote', 'app@attempt', '--onto', 'main', '--force']);
    ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1600, height: 900 } })).newPage();
    await page.goto(`${ui.url}?token=${TOKEN}`);
    await page.waitForSelector('svg.tree g.node');
  });

  after(async () => {
    await browser?.close();
    await ui?.stop();
    s?.cleanup();
  });

  test('storage draws its frame at once, then its figures; nothing to reclaim is not drawn as a warning', async () => {
    // The storage report is held until the page has had its chance to draw: what it shows meanwhile is what a
    // reader (or a screenshot taken at load) sees while a large store is read.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked: () => void = () => undefined;
    const requested = new Promise<void>((resolve) => (asked = resolve));
    await page.route('**/api/storage', async (route: Route) => {
      asked();
      await held;
      await route.continue();
    });
    await page.goto(`${ui.url}storage`);
    await requested;
    const waiting = await page.$eval('#view', (v) => v.textContent ?? '');
    assert.ok(await page.$('section.skeleton[data-skeleton="storage"]'), `while reading, the view shows: ${waiting}`);
    assert.match(waiting, /Storage of the store/);
    assert.ok(await page.$('#top nav a[href="/storage"]'), 'the header is drawn before the data arrives');
    release();
    await page.waitForSelector('section.storage');
    assert.equal(await page.$('section.skeleton'), null);
    await page.unroute('**/api/storage');
    const shot = screenshotPath('ui-storage.png');
    if (shot) await page.screenshot({ path: shot });

    assert.match((await page.textContent('.card.reclaim .big')) ?? '', /^0 B$/);
    const colour = (sel: string): Promise<string> =>
      page.$eval(sel, (el) => (globalThis as unknown as Styled).getComputedStyle(el).color);
    assert.equal(
      await colour('.card.reclaim .big'),
      await colour('.card:not(.reclaim) .big'),
      'nothing to reclaim is drawn like any other figure',
    );
  });

  test('two checkpoints at one txid both keep their label', async () => {
    await page.goto(`${ui.url}db/app`);
    await page.waitForSelector('g.node[data-branch="attempt"]');
    const labels = await page.$$eval('g.node[data-branch="attempt"] text.cp-label', (ts) =>
      ts.map((t) => t.textContent ?? ''),
    );
    const shown = labels.join(' ');
    for (const name of ['fork', 'fixed', 'tests-pass']) assert.match(shown, new RegExp(`\\b${name}\\b`), shown);
  });

  test('the branch panel puts the next commands above the lineage hashes', async () => {
    await page.goto(`${ui.url}db/app/branch/main`);
    await page.waitForSelector('aside.panel[data-panel="main"]');
    const text = (await page.textContent('aside.panel')) ?? '';
    const next = text.indexOf('Next steps');
    assert.ok(next >= 0, text);
    assert.ok(next < text.indexOf('lineage'), `"Next steps" comes after the lineage: ${text}`);
  });

  test('main after a promote is dashed while it reads what its source reads, solid once no branch does', async () => {
    await page.goto(`${ui.url}db/app`);
    await page.waitForSelector('[data-live="connected"]');
    assert.notEqual(await dashOf(page, 'main'), 'none', 'main reads through attempt, which is still here');
    assert.equal(await page.getAttribute('g.node[data-branch="main"]', 'data-storage'), 'shared');
    cli(s, ['destroy', 'app@attempt']);
    cli(s, ['destroy', 'app@main-pre-promote']);
    await page.waitForSelector('svg.tree:not(:has(g.node[data-branch="attempt"]))');
    await page.waitForSelector('svg.tree:not(:has(g.node[data-branch="main-pre-promote"]))');
    assert.equal(await dashOf(page, 'main'), 'none', 'no branch shares what main reads any more');
    assert.equal(await page.getAttribute('g.node[data-branch="main"]', 'data-storage'), 'shared');
  });

  test('one of a thing is counted in the singular', async () => {
    await page.goto(`${ui.url}db/app`);
    await page.waitForSelector('svg.tree g.node[data-branch="main"]');
    assert.match((await page.textContent('.tree-pane h2')) ?? '', /· 1 branch · 0 edges/);
    await page.goto(`${ui.url}storage`);
    await page.waitForSelector('section.storage');
    assert.match((await page.textContent('section.storage .cards')) ?? '', / · 1 branch(?!es)/);
  });
});
