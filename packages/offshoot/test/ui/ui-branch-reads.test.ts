// What a branch-panel click costs in store reads on a database of 1,000 branches, counted through a wrapper around
// the real local backend (never timed): the page keeps the tree it drew, and the panel reads the clicked branch's ref
// and main's (for the promote command), not every ref of the database again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { refKey } from '../../src/core/keys.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import type { ApiBranchDetail } from '../../src/ui/api-types.js';
import { startUiServer, type UiServerHandle } from '../../src/ui/ui-server.js';
import { CountingBackend } from '../ops/counting-backend.js';
import { openTestStore, type TestStore } from '../ops/harness.js';
import { browserMissing, launchBrowser } from './ui-support.js';

const TOKEN = 'ui-reads-token-0123456789abcdef01';
const skip = browserMissing();
const FILLER = 996;

describe('a branch-panel click on 1,000 branches', { skip }, () => {
  let ts: TestStore;
  let counting!: CountingBackend;
  let server: UiServerHandle;
  let url: string;
  let browser: Browser;
  let page: Page;

  // main → a-parent → a-child-1, a-child-2, and 996 more forks of main, all drawn after them in the outline.
  before(async () => {
    ts = await openTestStore({ wrap: (b) => (counting = new CountingBackend(b)) });
    await create(ts.ctx, 'app');
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'a-parent');
    await fork(ts.ctx, { db: 'app', branch: 'a-parent' }, 'a-child-1');
    await fork(ts.ctx, { db: 'app', branch: 'a-parent' }, 'a-child-2');
    for (let i = 0; i < FILLER; i++)
      await fork(ts.ctx, { db: 'app', branch: 'main' }, `z-${String(i).padStart(4, '0')}`);
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

  const refReads = (): string[] => counting.reads('refs/').map((c) => c.key);

  test('reads the clicked branch and main, and takes parent and children from the tree on show', async () => {
    await page.goto(`${url}db/app?token=${TOKEN}`);
    await page.waitForSelector('.outline[data-rows="1000"] .row[data-branch="a-parent"]');
    // Once the event stream is open the page reads the view once more (for what changed before it opened): that
    // render, the second, is over before the click is counted.
    await page.waitForSelector('.live-state[data-live="connected"]');
    await page.waitForSelector('body[data-rendered="2"]');

    counting.reset();
    await page.click('.row[data-branch="a-parent"] a.name');
    await page.waitForSelector('.panel[data-panel="a-parent"]');
    assert.deepEqual(
      refReads().sort(),
      [refKey('app', 'a-parent'), refKey('app', 'main')],
      'one read of the branch, one of main: not the 1,000 refs of the database',
    );
    assert.deepEqual(
      await page.$$eval('.panel [data-child]', (els) => els.map((e) => e.getAttribute('data-child'))),
      ['a-child-1', 'a-child-2'],
      "the children, from the tree's edges",
    );
    assert.match((await page.textContent('.panel')) ?? '', /made from app@main @1/);
    assert.deepEqual(
      await page.$$eval('.panel .commands code', (els) =>
        els.map((e) => e.textContent ?? '').filter((c) => c.includes(' promote ')),
      ),
      ['offshoot promote app@a-parent --onto main --force'],
      "the promote command, with the --force main's protection needs",
    );
  });

  test('the API answers without children from the same reads, and with them as before', async () => {
    await page.close();
    const get = async (q: string): Promise<ApiBranchDetail> => {
      const res = await fetch(`${url}api/dbs/app/branches/a-parent${q}`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(res.status, 200);
      return (await res.json()) as ApiBranchDetail;
    };
    counting.reset();
    const lean = await get('?children=0');
    assert.equal(lean.children, undefined);
    assert.deepEqual(refReads().sort(), [refKey('app', 'a-parent'), refKey('app', 'main')]);
    counting.reset();
    const full = await get('');
    assert.deepEqual(
      full.children?.map((e) => `${e.from}->${e.to} ${e.kind}`),
      ['a-parent->a-child-1 fork', 'a-parent->a-child-2 fork'],
    );
    assert.equal(new Set(refReads()).size, 1000, 'children cost a read of every ref');
    assert.deepEqual(lean.commands, full.commands);
    assert.deepEqual(lean.branch, full.branch);
  });

  test('children=2 is refused with a hint', async () => {
    const res = await fetch(`${url}api/dbs/app/branches/a-parent?children=2`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { code: string; hint: string };
    assert.equal(body.code, 'INVALID_ARGUMENT');
    assert.match(body.hint, /children=0/);
  });
});
