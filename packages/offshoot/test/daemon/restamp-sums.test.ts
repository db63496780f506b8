// The first close of a fresh fork's checkout: the `.pages` placed with it is the cache entry's version 2 (with fast
// hashes), and the close patches it in place into version 1 (O(changed pages), not a rewrite of every entry); the
// `.sum` after it says so, and an at-rest checkpoint afterwards still finds every page changed since.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { readSidecar } from '../../src/sqlite/checkout-sidecar.js';
import { FileSource, geometryOf, scanPageSums } from '../../src/sqlite/page-scan.js';
import { pageSumsPath } from '../../src/sqlite/page-sums.js';
import { query, runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

/** The content of table t, as one digest (a full dump of these rows is megabytes). */
const digest = (file: string): string => query(file, "SELECT hex(sha3_query('SELECT * FROM t ORDER BY id'));");

function scanned(file: string): Buffer {
  const src = new FileSource(file);
  try {
    return scanPageSums(src, geometryOf(src, src.size, file)).encode();
  } finally {
    src.close();
  }
}

describe('the first close of a fresh fork re-stamps its page sums in place', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = makeStoreDir();
    const seed = s.file('seed.db');
    runSql(
      seed,
      `CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
       INSERT INTO t(body) SELECT randomblob(900) FROM n;`,
    );
    const c = s.cli(['create', 'app', '--from', seed]);
    assert.equal(c.code, 0, c.stderr);
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  for (const grow of [false, true]) {
    test(grow ? 'rows inserted (the file grows)' : 'rows updated in place', async () => {
      const branch = grow ? 'ep-grow' : 'ep-update';
      assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: branch })).ok, true);
      const opened = await d.request({ op: 'open', db: 'app', branch });
      assert.equal(opened.ok, true, JSON.stringify(opened));
      const checkout = opened.checkout as string;
      const sums = pageSumsPath(checkout);
      assert.equal(readFileSync(sums).subarray(0, 8).toString(), 'OSPS0002', 'placed with the fast hashes');
      const ino = statSync(sums).ino;
      runSql(
        checkout,
        grow
          ? 'INSERT INTO t(body) SELECT randomblob(900) FROM t LIMIT 10;'
          : 'UPDATE t SET body = randomblob(900) WHERE id IN (7, 700, 1400);',
      );
      assert.equal((await d.request({ op: 'close', db: 'app', branch })).ok, true);
      assert.equal(statSync(sums).ino, ino, 'the close patched the placed file in place');
      assert.deepEqual(readFileSync(sums), scanned(checkout), 'the patched sums are the checkout’s');
      assert.equal(readSidecar(checkout)?.pages_version, 1, 'the .sum vouches for version 1');

      // At rest, pages change again: the at-rest checkpoint reads them against the patched sums.
      const before = digest(checkout);
      runSql(checkout, 'UPDATE t SET body = zeroblob(900) WHERE id IN (3, 1500);');
      assert.notEqual(digest(checkout), before);
      const cp = s.cli(['checkpoint', `app@${branch}`, 'after']);
      assert.equal(cp.code, 0, cp.stderr);
      const out = s.file(`${branch}.db`);
      assert.equal(s.cli(['export', `app@${branch}`, out]).code, 0);
      assert.equal(digest(out), digest(checkout), 'the checkpoint found every changed page');
    });
  }
});
