// restoreWalMode puts a database another tool left in rollback-journal mode back in WAL mode, and fails BUSY (with a
// hint naming the other connections) while another process holds the file in a read transaction: the stock sqlite3
// CLI, a foreign process, so the lock is a real file lock.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { hasCode, hintFor, type OffshootError } from '../../src/core/errors.js';
import { restoreWalMode } from '../../src/sqlite/wal-mode.js';
import { holdSqlite3 } from '../e2e/cli-harness.js';
import { query, runSql } from '../ops/sqlite-cli.js';

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'offshoot-wal-mode-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function journalMode(path: string): string {
  return query(path, 'PRAGMA journal_mode;').trim();
}

test('a database in DELETE mode is put back in WAL mode', () => {
  const path = join(dir, 'clean.db');
  runSql(path, 'PRAGMA journal_mode = DELETE; CREATE TABLE t(v); INSERT INTO t VALUES (1);');
  restoreWalMode(path, 0);
  assert.equal(journalMode(path), 'wal');
});

test('another process reading the file keeps it out of WAL mode: BUSY, naming the other connections', async () => {
  const path = join(dir, 'held.db');
  runSql(path, 'PRAGMA journal_mode = DELETE; CREATE TABLE t(v); INSERT INTO t VALUES (1);');
  const reader = await holdSqlite3(path, 'BEGIN; SELECT count(*) FROM t;');
  try {
    assert.throws(
      () => restoreWalMode(path, 0),
      (err: unknown) => {
        assert.ok(hasCode(err, 'BUSY'), `BUSY, got ${String(err)}`);
        assert.equal((err as OffshootError).retryable, true);
        assert.match(hintFor(err as OffshootError, 'cli') ?? '', /close the other connections/);
        return true;
      },
    );
  } finally {
    await reader.close();
  }
  assert.equal(journalMode(path), 'delete', 'nothing changed while it was held');
  restoreWalMode(path, 0);
  assert.equal(journalMode(path), 'wal');
});
