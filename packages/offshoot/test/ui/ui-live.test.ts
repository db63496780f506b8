// `serve -http ... -ui`: the dashboard on the daemon's listener follows the event stream — an open session with its
// durable txid, a flush and a reap appear without a reload, as does an at-rest fork by the CLI — marks the daemon's
// ephemeral forks, and shows the daemon's metric samples.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { runSql } from '../ops/sqlite-cli.js';
import { type DaemonProcess, makeStoreDir, type StoreDir, startDaemon, until } from '../daemon/daemon-process.js';
import { browserMissing, launchBrowser } from './ui-support.js';

const TOKEN = 'ui-live-token-0123456789abcdef';
const skip = browserMissing();

describe('serve -ui: live dashboard in chromium', { skip }, () => {
  let s: StoreDir;
  let d: DaemonProcess;
  let browser: Browser;
  let page: Page;
  let base = '';
  const cli = (args: string[]): string => {
    const r = s.cli(args);
    assert.equal(r.code, 0, `offshoot ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };

  before(async () => {
    s = makeStoreDir();
    const seed = s.file('seed.db');
    runSql(seed, "create table notes(id integer primary key, body text); insert into notes(body) values ('first');");
    cli(['create', 'app', '--from', seed]);
    cli(['fork', 'app', 'work']);
    cli(['fork', 'app', 'doomed', '--ttl', '1h']);
    d = await startDaemon(s, ['-http', '127.0.0.1:0', '-ui', '-reap-every', '200ms', '-flush-every', '0'], {
      OFFSHOOT_TOKEN: TOKEN,
    });
    await until(() => /ui: open /.test(d.stderr()), 'the ui line');
    base = `http://${/listening on (\S+)/.exec(d.stderr())?.[1]}/`;
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 800 } })).newPage();
  });

  after(async () => {
    await browser?.close();
    await d?.stop();
    s?.cleanup();
  });

  test('the daemon’s own routes keep their bearer token and the ui refuses requests without one', async () => {
    assert.equal((await fetch(`${base}api/events`)).status, 401);
    assert.equal((await fetch(`${base}db/app`)).status, 401);
    assert.equal((await fetch(`${base}rpc`, { method: 'POST' })).status, 401);
    const dbs = await fetch(`${base}api/dbs`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(dbs.status, 200);
    assert.deepEqual(((await dbs.json()) as { server: { mode: string; live: boolean } }).server.mode, 'daemon');
  });

  test('a session, a flush and a reap appear without a reload', async () => {
    await page.goto(`${base}?token=${TOKEN}`);
    await page.waitForSelector('[data-live="connected"]');
    await page.waitForSelector('g.node[data-branch="doomed"]');
    await page.evaluate(() => {
      (globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true;
    });
    const checkout = cli(['session', 'open', 'app@work', '-socket', d.sock]);
    await page.waitForSelector('g.node[data-branch="work"].has-session');
    const head = Number(await page.getAttribute('g.node[data-branch="work"]', 'data-head'));
    runSql(checkout, "insert into notes(body) values ('live');");
    cli(['session', 'flush', 'app@work', '-socket', d.sock]);
    await page.waitForSelector(`g.node[data-branch="work"][data-head="${head + 1}"]`);
    assert.match(
      (await page.textContent('g.node[data-branch="work"] text.sub')) ?? '',
      new RegExp(`^session · durable@${head + 1} · lag `),
    );
    cli(['touch', 'app@doomed', '--ttl', '1s']);
    await page.waitForSelector('g.node[data-branch="doomed"]', { state: 'detached', timeout: 30_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce), true);
    const daemonEvents = ((await page.getAttribute('body', 'data-daemon-events')) ?? '').split(' ');
    for (const type of ['session_opened', 'flushed', 'reaped'])
      assert.ok(daemonEvents.includes(type), `the page saw the daemon's ${type} event: ${daemonEvents.join(' ')}`);
    cli(['fork', 'app', 'late']);
    await page.waitForSelector('g.node[data-branch="late"]');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce), true);
    cli(['session', 'close', 'app@work', '-socket', d.sock]);
  });

  test('an ephemeral fork the daemon holds is drawn and badged as one', async () => {
    cli(['fork', 'app', 'fleeting', '--ephemeral', '-socket', d.sock]);
    const tree = await fetch(`${base}api/dbs/app/tree`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const branches = ((await tree.json()) as { branches: Array<{ branch: string; ephemeral?: boolean }> }).branches;
    assert.equal(branches.find((b) => b.branch === 'fleeting')?.ephemeral, true);
    assert.equal(branches.find((b) => b.branch === 'work')?.ephemeral, undefined);
    await page.goto(`${base}db/app?token=${TOKEN}`);
    await page.waitForSelector('g.node.ephemeral[data-branch="fleeting"]');
    assert.ok(((await page.textContent('g.node[data-branch="fleeting"]')) ?? '').includes('ephemeral'));
  });

  test('storage shows the daemon’s flush, fork, GC and reap samples', async () => {
    await page.goto(`${base}db/app/storage`);
    await page.waitForSelector('section.series');
    const series = await page.$$eval('svg.spark', (els) => els.map((e) => e.getAttribute('data-series')));
    assert.deepEqual(series, ['flushes', 'forks', 'gc_passes', 'reaped']);
  });
});
