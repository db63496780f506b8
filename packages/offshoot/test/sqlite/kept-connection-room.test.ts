// The connections a process keeps on checkouts stay within the room it is given, the least recently kept closing
// first, and an open that fails for want of a descriptor closes them all and is tried once more.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { withFileRoom } from '../../src/platform/file-room.js';
import { keepConnections } from '../../src/sqlite/kept-connection.js';
import { FrozenCheckout } from '../../src/sqlite/quiesce.js';
import { runSql } from '../ops/sqlite-cli.js';

// Descriptors this process holds on the database at path, its -wal and -shm.
function heldOn(path: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(path)) n++;
    } catch {
      // Closed between the listing and the read (the listing's own descriptor).
    }
  }
  return n;
}

// Reads the checkout at path through a frozen connection, which release then leaves kept (room permitting).
function readThenKeep(path: string): void {
  FrozenCheckout.open(path).release();
}

describe('kept connections within their room', () => {
  let dir: string;
  let dbs: string[];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'offshoot-kept-'));
    dbs = ['a', 'b', 'c'].map((n) => join(dir, `${n}.db`));
    for (const db of dbs) runSql(db, 'PRAGMA journal_mode=WAL; CREATE TABLE t(v); INSERT INTO t VALUES (1);');
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test('no more are kept than the room allows, the least recently kept closing first', () => {
    let room = 2;
    const keeping = keepConnections(dir, () => room);
    try {
      for (const db of dbs) readThenKeep(db);
      assert.deepEqual(
        dbs.map((db) => heldOn(db) > 0),
        [false, true, true],
      );
      readThenKeep(dbs[1] ?? '');
      room = 1;
      keeping.trim();
      assert.deepEqual(
        dbs.map((db) => heldOn(db) > 0),
        [false, true, false],
        'b was kept again after c: c closes first',
      );
      room = 0;
      readThenKeep(dbs[0] ?? '');
      keeping.trim();
      assert.deepEqual(
        dbs.map((db) => heldOn(db)),
        [0, 0, 0],
        'without room, nothing is kept',
      );
    } finally {
      keeping.stop();
    }
  });

  test('an open failing for want of a descriptor closes every kept connection and is tried once more', () => {
    const keeping = keepConnections(dir, () => 3);
    try {
      for (const db of dbs) readThenKeep(db);
      assert.ok(dbs.every((db) => heldOn(db) > 0));
      let tries = 0;
      const opened = withFileRoom(() => {
        tries++;
        if (tries === 1) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
        return 'opened';
      });
      assert.equal(opened, 'opened');
      assert.equal(tries, 2);
      assert.deepEqual(
        dbs.map((db) => heldOn(db)),
        [0, 0, 0],
      );
      // With nothing left to give up, the failure is the caller's at once.
      tries = 0;
      assert.throws(
        () =>
          withFileRoom(() => {
            tries++;
            throw Object.assign(new Error('ENFILE: file table overflow'), { code: 'ENFILE' });
          }),
        /ENFILE/,
      );
      assert.equal(tries, 1);
    } finally {
      keeping.stop();
    }
  });
});
