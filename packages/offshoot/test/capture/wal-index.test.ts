import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { readWalIndexHeader, sameGeneration } from '../../src/capture/wal-index.js';
import { parseWalHeader } from '../../src/sqlite/wal-header.js';

test('the wal-index header tracks the last committed frame and the salts of the -wal header', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  const db = openDatabase(path.join(dir, 'x.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t(x)');
    const walPath = path.join(dir, 'x.db-wal');
    const shmPath = path.join(dir, 'x.db-shm');
    const frames = (): number => (fs.statSync(walPath).size - 32) / (24 + 4096);
    for (let i = 0; i < 3; i++) {
      db.prepare('INSERT INTO t VALUES (randomblob(5000))').run();
      const index = readWalIndexHeader(shmPath);
      assert.ok(index);
      assert.equal(index.mxFrame, frames());
      const header = parseWalHeader(fs.readFileSync(walPath).subarray(0, 32));
      assert.ok(sameGeneration(index, header));
    }
    const salts = readWalIndexHeader(shmPath);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const reset = readWalIndexHeader(shmPath);
    assert.equal(reset?.mxFrame, 0);
    assert.equal(reset?.salt1, ((salts?.salt1 ?? 0) + 1) >>> 0, 'a reset adds one to salt-1');
    assert.ok(!sameGeneration(salts, reset));
    assert.equal(sameGeneration(undefined, reset), false);
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
