// The dashboard's threat model, checked against a real `offshoot ui` process and a real browser: no token, no page
// (bound beyond loopback too); loopback unless acknowledged, with an explicit token; GET only; store names only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import { browserMissing, launchBrowser, startUi, type UiProcess } from './ui-support.js';

const TOKEN = 'ui-auth-token-0123456789abcdef';
const skip = browserMissing();

describe('offshoot ui: tokens and refusals', () => {
  let s: StoreDir;
  let ui: UiProcess;
  let base = '';
  let browser: Browser | undefined;

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    ui = await startUi(s, ['-listen', '0.0.0.0:0', '-allow-non-loopback'], { OFFSHOOT_TOKEN: TOKEN });
    base = `http://127.0.0.1:${new URL(ui.url).port}/`;
  });

  after(async () => {
    await browser?.close();
    await ui?.stop();
    s?.cleanup();
  });

  test('bound beyond loopback: no token or a wrong one means no page; the right one opens it', { skip }, async () => {
    browser = await launchBrowser();
    const page = await (await browser.newContext()).newPage();
    for (const url of [`${base}db/app`, `${base}?token=wrong-token-0123456789`, `${base}assets/app.js`]) {
      const res = await page.goto(url);
      assert.equal(res?.status(), 401, url);
      assert.equal(await page.$('#view'), null, `${url} served no page`);
      assert.match((await page.textContent('body')) ?? '', /token is required/);
    }
    await page.goto(`${base}db/app?token=${TOKEN}`);
    await page.waitForSelector('g.node[data-branch="main"]');
    assert.equal(new URL(page.url()).search, '', 'the token is swapped for a cookie and dropped from the URL');
  });

  test('the API wants the token too, accepts it as a bearer header, and answers GET only', async () => {
    assert.equal((await fetch(`${base}api/dbs`)).status, 401);
    assert.equal(
      (await fetch(`${base}api/dbs`, { headers: { Authorization: 'Bearer nope-nope-nope-nope' } })).status,
      401,
    );
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const ok = await fetch(`${base}api/dbs`, { headers: auth });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-frame-options'), 'DENY');
    assert.match(ok.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await fetch(`${base}api/dbs`, { method, headers: auth });
      assert.equal(r.status, 405, method);
    }
    const traversal = await fetch(`${base}api/dbs/..%2F..%2Fetc/tree`, { headers: auth });
    assert.equal(traversal.status, 400);
    assert.equal(((await traversal.json()) as { code: string }).code, 'INVALID_NAME');
    assert.equal((await fetch(`${base}api/dbs/%E0%A4%A/tree`, { headers: auth })).status, 400, 'malformed escape');
    assert.equal((await fetch(`${base}api/dbs/nope/tree`, { headers: auth })).status, 404);
    assert.equal((await fetch(`${base}etc/passwd`, { headers: auth })).status, 404);
    const stop = new AbortController();
    const events = await fetch(`${base}api/events`, { headers: auth, signal: stop.signal });
    assert.equal(events.status, 200, 'at rest the stream carries ref-change notices');
    assert.match(events.headers.get('content-type') ?? '', /^text\/event-stream/);
    stop.abort();
    const series = await fetch(`${base}api/metrics/series`, { headers: auth });
    assert.equal(series.status, 404, 'no metrics without a daemon');
    assert.equal(((await series.json()) as { code: string }).code, 'UNSUPPORTED');
  });

  test('on loopback without a token, one is generated and printed once, in the URL to open', async () => {
    const local = await startUi(s, ['-listen', '127.0.0.1:0']);
    try {
      const url = /ui: open (http:\S+\?token=([0-9a-f]{64}))\n/.exec(local.stderr());
      assert.ok(url, local.stderr());
      const open = await fetch(url[1] ?? '', { redirect: 'manual' });
      assert.equal(open.status, 303);
      assert.equal(open.headers.get('location'), '/');
      const cookie = (open.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      assert.match(open.headers.get('set-cookie') ?? '', /HttpOnly; SameSite=Strict/);
      assert.equal((await fetch(`${local.url}api/dbs`, { headers: { Cookie: cookie } })).status, 200);
      assert.equal((await fetch(`${local.url}api/dbs`)).status, 401);
    } finally {
      await local.stop();
    }
  });

  test('a non-loopback address needs the acknowledgment and an explicit token; a short token is refused', () => {
    const refuse = (args: string[], env: NodeJS.ProcessEnv, pattern: RegExp): void => {
      const r = s.cli(['ui', ...args], env);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, pattern);
    };
    refuse(['-listen', '0.0.0.0:0'], { OFFSHOOT_TOKEN: TOKEN }, /refusing to listen on a non-loopback address/);
    refuse(['-listen', '0.0.0.0:0', '-allow-non-loopback'], {}, /needs an explicit token/);
    refuse(['-token', 'short'], {}, /at least 16/);
    const serve = s.cli(['serve', '-ui', '-socket', s.file('x.sock')]);
    assert.equal(serve.code, 2, serve.stderr);
    assert.match(serve.stderr, /-ui requires -http/);
  });
});
