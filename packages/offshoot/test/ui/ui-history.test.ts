// The branch panel's timeline in a real browser: every change of the branch from its log, who asked and through
// what, newest first, each state linked to its diff against the head by its moment (@tx:N); and the log route.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { withOrigin } from '../../src/ops/context.js';
import type { ApiLog } from '../../src/ui/api-types.js';
import { startUiServer, type UiServerHandle } from '../../src/ui/ui-server.js';
import { openTestStore, type TestStore } from '../ops/harness.js';
import { runSql } from '../ops/sqlite-cli.js';
import { browserMissing, launchBrowser } from './ui-support.js';

const TOKEN = 'ui-history-token-0123456789abcdef0';
const skip = browserMissing();

describe('the branch panel timeline', { skip }, () => {
  let ts: TestStore;
  let server: UiServerHandle;
  let url: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ts = await openTestStore();
    const agent = withOrigin(ts.ctx, { actor: 'agent', surface: 'mcp:offshoot_fork', meta: { run: 'r-9' } });
    await create(ts.ctx, 'app');
    await fork(agent, { db: 'app', branch: 'main' }, 'attempt');
    const co = await checkout(agent, { db: 'app', branch: 'attempt' });
    runSql(co.path, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
    await checkpoint(agent, { db: 'app', branch: 'attempt' }, 'one');
    server = await startUiServer(
      { ctx: ts.ctx, storeLabel: 'test', version: 'test' },
      { host: '127.0.0.1', port: 0, token: TOKEN, tokenSource: 'flag' },
    );
    url = `http://${server.address}/`;
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await ts?.cleanup();
  });

  test('shows who did what, newest first, and links each earlier state to its diff by moment', async () => {
    await page.goto(`${url}db/app/branch/attempt?token=${TOKEN}`);
    const rows = page.locator('section[data-history="attempt"] tbody tr');
    await rows.first().waitFor();
    const text = await rows.allInnerTexts();
    assert.equal(text.length, 2);
    assert.match(text[0] ?? '', /checkpoint\s+1 → 2\s+agent\s+mcp:offshoot_fork\s+one/);
    assert.match(text[1] ?? '', /fork\s+0 → 1\s+agent\s+mcp:offshoot_fork\s+from app@main@1/);
    assert.match(text[1] ?? '', /run=r-9/);
    const link = rows.nth(1).locator('a', { hasText: 'diff to head' });
    assert.match((await link.getAttribute('href')) ?? '', /attempt%40tx%3A1|attempt@tx:1/);
  });

  test('GET …/log serves the whole log with the filters of offshoot log', async () => {
    const res = await page.request.get(`${url}api/dbs/app/branches/attempt/log?actor=agent&limit=1`);
    assert.equal(res.status(), 200);
    const log = (await res.json()) as ApiLog;
    assert.deepEqual(
      log.records.map((r) => [r.op, r.actor, r.surface]),
      [['checkpoint', 'agent', 'mcp:offshoot_fork']],
    );
    assert.equal(log.truncated, true);
    const bad = await page.request.get(`${url}api/dbs/app/branches/attempt/log?actor=robot`);
    assert.equal(bad.status(), 400);
  });
});
