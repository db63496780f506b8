// A raw descriptor this process opens on a database file (a freeze's page reads, a kept connection's) never drops
// the locks another of its SQLite connections holds on that file: POSIX locks belong to the (process, inode) pair,
// so its close waits for the last connection on the file to close.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sha256File } from '../../src/sqlite/checkout-sidecar.js';
import { openConnection } from '../../src/sqlite/connection.js';
import { dropKept, keepConnections } from '../../src/sqlite/kept-connection.js';
import { FrozenCheckout } from '../../src/sqlite/quiesce.js';
import { fsyncDatabase } from '../../src/sqlite/sync-database.js';
import { runSql } from '../ops/sqlite-cli.js';

// What the stock sqlite3 CLI says when it runs sql on path without waiting for any lock ('' when it got in).
function foreign(path: string, sql: string): string {
  const r = spawnSync('sqlite3', ['-bail', path], {
    input: `PRAGMA busy_timeout=0;\n${sql}\n`,
    encoding: 'utf8',
  });
  return r.status === 0 ? '' : r.stderr;
}

// A foreign connection that takes the file alone: SQLite grants it only while no other connection has it open.
const TAKE_ALONE = 'PRAGMA locking_mode=EXCLUSIVE; BEGIN IMMEDIATE; COMMIT;';

// Descriptors this process holds on exactly the file at path.
function heldOnFile(path: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) n++;
    } catch {
      // Closed between the listing and the read (the listing's own descriptor).
    }
  }
  return n;
}

describe('raw descriptors on a database file beside a connection of the same process', () => {
  let dir: string;
  let n = 0;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'offshoot-raw-fd-'));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  function database(mode: 'WAL' | 'DELETE'): string {
    const path = join(dir, `db${++n}.db`);
    runSql(path, `PRAGMA journal_mode=${mode}; CREATE TABLE t(v); INSERT INTO t VALUES (1);`);
    return path;
  }

  test("a freeze and release beside a connection's write transaction leaves its write lock held", () => {
    const path = database('DELETE');
    const a = openConnection(path);
    try {
      a.exec('BEGIN IMMEDIATE');
      a.prepare('INSERT INTO t VALUES (2)').run();
      assert.match(foreign(path, 'BEGIN IMMEDIATE; INSERT INTO t VALUES (3); COMMIT;'), /database is locked/);
      FrozenCheckout.open(path, 0).release();
      assert.match(
        foreign(path, 'BEGIN IMMEDIATE; INSERT INTO t VALUES (3); COMMIT;'),
        /database is locked/,
        "the freeze's descriptor closed under the write transaction dropped its lock",
      );
      a.exec('COMMIT');
    } finally {
      a.close();
    }
    assert.equal(foreign(path, 'BEGIN IMMEDIATE; INSERT INTO t VALUES (3); COMMIT;'), '');
  });

  test("syncing and hashing a database beside a connection's write transaction leaves its write lock held", async () => {
    const path = database('DELETE');
    const a = openConnection(path);
    try {
      a.exec('BEGIN IMMEDIATE');
      a.prepare('INSERT INTO t VALUES (2)').run();
      await fsyncDatabase(path);
      assert.match(foreign(path, 'BEGIN IMMEDIATE; COMMIT;'), /database is locked/, 'the sync dropped the lock');
      const hash = await sha256File(path);
      assert.match(foreign(path, 'BEGIN IMMEDIATE; COMMIT;'), /database is locked/, 'the hash dropped the lock');
      assert.equal(hash, createHash('sha256').update(readFileSync(path)).digest('hex'));
      assert.equal(await sha256File(path), hash, 'a descriptor used again is read from the start');
      a.exec('COMMIT');
    } finally {
      a.close();
    }
    assert.equal(heldOnFile(path), 0, 'their descriptors are given back with the connection');
  });

  test("a checkout frozen and released beside a connection's read transaction stays shared", () => {
    const path = database('WAL');
    const a = openConnection(path);
    try {
      a.exec('BEGIN');
      a.prepare('SELECT count(*) FROM t').get();
      assert.match(foreign(path, TAKE_ALONE), /database is locked/);
      FrozenCheckout.open(path).release();
      assert.match(
        foreign(path, TAKE_ALONE),
        /database is locked/,
        "the freeze's descriptor closed beside the connection dropped its shared lock",
      );
      a.exec('COMMIT');
    } finally {
      a.close();
    }
    assert.equal(foreign(path, TAKE_ALONE), '');
  });

  test('a descriptor deferred on a file is used again by the next raw read there, so deferred ones never pile up', () => {
    const path = database('WAL');
    const a = openConnection(path);
    try {
      a.prepare('SELECT count(*) FROM t').get();
      FrozenCheckout.open(path).release();
      const afterOne = heldOnFile(path);
      for (let i = 0; i < 20; i++) FrozenCheckout.open(path).release();
      assert.equal(heldOnFile(path), afterOne, 'each freeze beside the connection left one more descriptor');
    } finally {
      a.close();
    }
    assert.equal(heldOnFile(path), 0);
  });

  test("a kept connection's descriptor is given back only once the last connection on the file closes", () => {
    const path = database('WAL');
    const keeping = keepConnections(dir, () => 4);
    const a = openConnection(path);
    try {
      a.exec('BEGIN');
      a.prepare('SELECT count(*) FROM t').get();
      FrozenCheckout.open(path).release();
      const whileKept = heldOnFile(path);
      assert.ok(whileKept >= 2, 'the kept connection and its raw descriptor are open beside the first');
      dropKept(path);
      assert.match(
        foreign(path, TAKE_ALONE),
        /database is locked/,
        "the kept connection's descriptor closed beside the connection dropped its shared lock",
      );
      assert.equal(heldOnFile(path), whileKept, 'nothing on the file is closed while a connection holds it');
      a.exec('COMMIT');
    } finally {
      a.close();
      keeping.stop();
    }
    assert.equal(heldOnFile(path), 0, 'the deferred descriptors are given back with the last connection');
    assert.equal(foreign(path, TAKE_ALONE), '');
  });
});
