// The merge preview of `offshoot ui` on a store at rest: GET /api/merge on two forks with a conflicting row and one
// disjoint change each (the conflict, the rows taken from each side, nothing written), and the diff viewer's view of
// it in real headless chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { ApiMerge, ApiTree } from '../../src/ui/api-types.js';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import { runSql } from '../ops/sqlite-cli.js';
import { browserMissing, launchBrowser, startUi, type UiProcess } from './ui-support.js';

const TOKEN = 'ui-merge-token-0123456789abcdef01';

function cli(s: StoreDir, args: string[]): string {
  const r = s.cli(args);
  assert.equal(r.code, 0, `offshoot ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** main holds apple (1), pear (2), plum (3); a and b both change pear, a adds kiwi, b changes apple. */
function twoForks(s: StoreDir): void {
  const seed = s.file('seed.db');
  runSql(
    seed,
    "create table items(id integer primary key, name text, qty int); insert into items(name, qty) values ('apple', 3), ('pear', 5), ('plum', 7);",
  );
  cli(s, ['create', 'app', '--from', seed]);
  cli(s, ['fork', 'app', 'a', 'b']);
  runSql(
    cli(s, ['checkout', 'app@a']),
    "update items set qty = 10 where id = 2; insert into items(name, qty) values ('kiwi', 2);",
  );
  cli(s, ['checkpoint', 'app@a', 'done']);
  runSql(
    cli(s, ['checkout', 'app@b']),
    'update items set qty = 20 where id = 2; update items set qty = 1 where id = 1;',
  );
  cli(s, ['checkpoint', 'app@b', 'done']);
}

describe('the merge preview of offshoot ui', () => {
  let s: StoreDir;
  let ui: UiProcess;
  const api = async (path: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${ui.url}api/${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: await res.json() };
  };

  before(async () => {
    s = makeStoreDir();
    twoForks(s);
    ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
  });
  after(async () => {
    await ui?.stop();
    s?.cleanup();
  });

  test('GET /api/merge lists the conflict and the rows taken from each side, and writes nothing', async () => {
    const before = (await api('dbs/app/tree')).body as ApiTree;
    const r = await api('merge?db=app&source=a&into=b');
    assert.equal(r.status, 200);
    const m = r.body as ApiMerge;
    assert.deepEqual([m.source, m.target, m.applied, m.base.kind], ['a', 'b', false, 'siblings']);
    assert.deepEqual(m.conflicts, [
      {
        table: 'items',
        kind: 'update/update',
        key: { id: 2 },
        base: { id: 2, name: 'pear', qty: 5 },
        source: { id: 2, name: 'pear', qty: 10 },
        target: { id: 2, name: 'pear', qty: 20 },
      },
    ]);
    assert.deepEqual(m.tables, [{ table: 'items', inserted: 1, updated: 0, deleted: 0 }]);
    assert.deepEqual(m.kept, [{ table: 'items', inserted: 0, updated: 2, deleted: 0 }]);
    const after = (await api('dbs/app/tree')).body as ApiTree;
    const heads = (t: ApiTree) => t.branches.map((b) => `${b.branch}@${b.head_txid}`).sort();
    assert.deepEqual(heads(after), heads(before), 'no branch moved and no undo point was made');
    const missing = await api('merge?db=app&source=a');
    assert.deepEqual([missing.status, (missing.body as { code: string }).code], [400, 'INVALID_ARGUMENT']);
    const self = await api('merge?db=app&source=a&into=a');
    assert.equal(self.status, 400, 'a branch into itself is refused as merge refuses it');
  });

  describe('in chromium', { skip: browserMissing() }, () => {
    let browser: Browser;
    let page: Page;
    before(async () => {
      browser = await launchBrowser();
      page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    });
    after(async () => {
      await browser?.close();
    });

    test('the diff viewer links to the merge preview, which shows the conflict and the counts', async () => {
      await page.goto(`${ui.url}diff?left=app@b&right=app@a&token=${TOKEN}`);
      await page.click('a[data-merge-link]');
      await page.waitForSelector('section.merge-preview');
      assert.match(page.url(), /merge=1/);
      const conflicts = await page.$$eval('tr[data-merge-conflict]', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      );
      assert.deepEqual(conflicts, [
        ['items', 'update/update', 'id=2', 'id=2 name=pear qty=5', 'id=2 name=pear qty=10', 'id=2 name=pear qty=20'],
      ]);
      const side = (name: string) => page.textContent(`ul[data-merge-side="${name}"] li[data-table="items"]`);
      assert.equal(await side('source'), 'items +1 −0 ~0');
      assert.equal(await side('target'), 'items +0 −0 ~2');
    });
  });
});
