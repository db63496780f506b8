// `offshoot ui` on a store at rest, in real headless chromium: the drawn tree of a scripted history (exact nodes and
// edges), the branch panel, the diff viewer on a one-row change with its SQL download, storage, and TTL states.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import {
  browserMissing,
  HISTORY_EDGES,
  HISTORY_NODES,
  launchBrowser,
  screenshotPath,
  scriptedHistory,
  startUi,
  type UiProcess,
} from './ui-support.js';

const TOKEN = 'ui-at-rest-token-0123456789abcdef';
const skip = browserMissing();

async function treeOf(page: Page): Promise<{ nodes: string[]; edges: string[] }> {
  const nodes = await page.$$eval('svg.tree g.node', (els) => els.map((n) => n.getAttribute('data-branch') ?? ''));
  const edges = await page.$$eval('svg.tree path.edge', (els) =>
    els.map(
      (e) =>
        `${e.getAttribute('data-from')}->${e.getAttribute('data-to')} ${e.getAttribute('data-kind')} @${e.getAttribute('data-txid')}`,
    ),
  );
  return { nodes: nodes.sort(), edges: edges.sort() };
}

describe('offshoot ui (store at rest) in chromium', { skip }, () => {
  let s: StoreDir;
  let ui: UiProcess;
  let browser: Browser;
  let page: Page;

  before(async () => {
    s = makeStoreDir();
    scriptedHistory(s);
    ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1600, height: 900 } })).newPage();
  });

  after(async () => {
    await browser?.close();
    await ui?.stop();
    s?.cleanup();
  });

  test('a one-database store opens on its tree, with exactly the history’s nodes and edges', async () => {
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    await page.goto(`${ui.url}?token=${TOKEN}`);
    await page.waitForSelector('svg.tree g.node');
    assert.equal(new URL(page.url()).pathname, '/db/app', 'the token left the URL and the only database opened');
    const tree = await treeOf(page);
    assert.deepEqual(tree.nodes, HISTORY_NODES);
    assert.deepEqual(tree.edges, HISTORY_EDGES);
    const attr = (branch: string, name: string): Promise<string | null> =>
      page.getAttribute(`g.node[data-branch="${branch}"]`, name);
    assert.match((await attr('main', 'class')) ?? '', /\bprotected\b/);
    assert.equal(await attr('attempt-c', 'data-storage'), 'materialized', 'compact made attempt-c self-contained');
    assert.equal(await attr('attempt-a', 'data-storage'), 'shared');
    assert.match((await attr('main-pre-promote', 'class')) ?? '', /\bundo\b/);
    assert.equal(await attr('attempt-a', 'data-head'), '4', 'rolled back to a1 at txid 4');
    const elsewhere = requested.filter((u) => !u.startsWith(ui.url));
    assert.deepEqual(elsewhere, [], 'the page loads nothing from anywhere but its own server');
    const dots = await page.$$eval('g.node[data-branch="attempt-a"] circle.checkpoint', (cs) =>
      cs.map((c) => `${c.getAttribute('data-checkpoint')}@${c.getAttribute('data-txid')}`),
    );
    assert.deepEqual(dots, ['fork@3', 'a1@4']);
    assert.match(
      (await page.textContent('g.node[data-branch="scratch"] text[data-ttl]')) ?? '',
      /^ttl 1h0m0s · (59m|1h)/,
    );
  });

  test('a branch has its own URL: the panel shows ref fields, checkpoints with meta, chain and commands', async () => {
    await page.click('g.node[data-branch="attempt-a"]');
    await page.waitForSelector('aside.panel[data-panel="attempt-a"]');
    assert.equal(new URL(page.url()).pathname, '/db/app/branch/attempt-a');
    const text = (await page.textContent('aside.panel')) ?? '';
    assert.match(text, /reads through lineages/);
    assert.match(text, /made from app@main @3/);
    const cmds = await page.$$eval('aside.panel .commands code', (cs) => cs.map((c) => c.textContent));
    assert.ok(cmds.includes('offshoot rollback app@attempt-a --to a1'), cmds.join('\n'));
    assert.ok(cmds.includes('offshoot checkout app@attempt-a'));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url.replace(/\/$/, '') });
    const rollback = page.locator('aside.panel .commands li', { hasText: 'offshoot rollback app@attempt-a --to a1' });
    await rollback.locator('button.copy').click();
    await rollback.locator('button.copy', { hasText: 'copied' }).waitFor();
    assert.equal(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
      'offshoot rollback app@attempt-a --to a1',
    );
    const shot = screenshotPath('ui-tree.png');
    if (shot) await page.screenshot({ path: shot });
    // A shared link opens the same view in a fresh page (the cookie carries the token).
    const again = await page.context().newPage();
    await again.goto(`${ui.url}db/app/branch/attempt-a`);
    await again.waitForSelector('aside.panel[data-panel="attempt-a"]');
    await again.close();
    await page.goto(`${ui.url}db/app/branch/attempt-c`);
    await page.waitForSelector('aside.panel[data-panel="attempt-c"]');
    assert.match((await page.textContent('aside.panel')) ?? '', /materialized/);
  });

  test('the diff viewer shows the changed row of a one-row change, and the --sql patch downloads', async () => {
    await page.goto(`${ui.url}diff?left=app@attempt-b@fork&right=app@attempt-b`);
    await page.waitForSelector('table.rows');
    const rows = await page.$$eval('table.rows tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    assert.deepEqual(rows, [['~', '2', 'pear', '5 → 42']]);
    assert.equal(await page.getAttribute('li[data-table="items"]', 'data-status'), 'changed');
    const shot = screenshotPath('ui-diff.png');
    if (shot) await page.screenshot({ path: shot });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-sql]')]);
    const sql = readFileSync(await download.path(), 'utf8');
    assert.match(sql, /UPDATE "items" SET "qty" ?= ?42 WHERE "id" ?= ?2/i);
    assert.equal(download.suggestedFilename(), 'app-attempt-b..app-attempt-b.sql');
  });

  test('storage shows bytes per branch and lineage and what GC would reclaim', async () => {
    await page.goto(`${ui.url}db/app/storage`);
    await page.waitForSelector('section.storage');
    const branches = await page.$$eval('section.storage table:first-of-type tbody tr', (trs) => trs.length);
    assert.equal(branches, HISTORY_NODES.length);
    assert.match((await page.textContent('.card.reclaim')) ?? '', /GC would reclaim/);
    const layout = (await page.textContent('.card.layout')) ?? '';
    assert.match(layout, /^layout 3/, 'a new store is at the newest layout');
    assert.doesNotMatch(layout, /offshoot upgrade/, 'so upgrading buys nothing');
    assert.match((await page.textContent('section.storage')) ?? '', /store at rest/);
  });

  test('a fork by the CLI appears without a reload', async () => {
    await page.goto(`${ui.url}db/app`);
    await page.waitForSelector('[data-live="connected"]');
    await page.evaluate(() => {
      (globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true;
    });
    const r = s.cli(['fork', 'app@attempt-b', 'attempt-d']);
    assert.equal(r.code, 0, r.stderr);
    await page.waitForSelector('path.edge[data-from="attempt-b"][data-to="attempt-d"][data-kind="fork"]', {
      state: 'attached',
    });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce), true);
  });

  test('an expired TTL counts down to "expired · not reaped yet" with no janitor running', async () => {
    const r = s.cli(['touch', 'app@scratch', '--ttl', '1s']);
    assert.equal(r.code, 0, r.stderr);
    await page.goto(`${ui.url}db/app`);
    await page.waitForSelector('g.node[data-branch="scratch"] text.sub.warn', { timeout: 15_000 });
    assert.equal(await page.textContent('g.node[data-branch="scratch"] text.sub'), 'expired · not reaped yet');
    await page.reload();
    await page.waitForSelector('g.node[data-branch="scratch"][data-expired="true"]');
  });

  test('the outline of the same history nests each branch under its fork parent; a promote hangs nothing', async () => {
    await page.goto(`${ui.url}db/app?layout=outline`);
    await page.waitForSelector('.outline[data-rows="8"]');
    const rows = await page.$$eval('.outline .row', (els) =>
      els.map((e) => `${e.getAttribute('aria-level')} ${e.getAttribute('data-branch')}`),
    );
    assert.deepEqual(rows, [
      '1 main',
      '2 attempt-a',
      '3 attempt-a-pre-rollback',
      '2 attempt-b',
      '3 attempt-d',
      '2 attempt-c',
      '2 main-pre-promote',
      '2 scratch',
    ]);
    assert.equal(await page.textContent('.row[data-branch="main"] .promoted'), 'promoted from attempt-b');
    assert.equal(await page.textContent('.row[data-branch="scratch"] .sub.warn'), 'expired · not reaped yet');
    assert.equal(await page.textContent('.row[data-branch="main-pre-promote"] .badge-pre-promote'), 'pre-promote');
    await page.click('.layout-switch a[data-layout="graph"]');
    await page.waitForSelector('svg.tree g.node[data-branch="main"]');
    assert.equal(await page.$('.outline'), null);
  });
});
