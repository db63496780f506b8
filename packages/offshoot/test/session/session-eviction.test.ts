// A session's capture stops (close, eviction) and the checkout is stamped as the durable head so the next open proves
// it clean without reading it. Between capture letting go and the stamp another connection may commit: such a
// checkout must never be stamped clean, and whatever it holds must reach the store. Evicted sessions reconnect from
// what the file holds: untouched without reading it, written to by a rescan compared with the head (a segment).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SqliteDatabase } from '../../src/sqlite/sqlite-database.js';
import { create } from '../../src/ops/create.js';
import { Session } from '../../src/session/session.js';
import { checkClean, readSidecar } from '../../src/sqlite/checkout-sidecar.js';
import { exportDump, openTestStore, type TestStore } from '../ops/harness.js';
import { runSql } from '../ops/sqlite-cli.js';

/** Runs inject() just before the nth `wal_checkpoint(TRUNCATE)` of any connection of this process. */
function beforeNthTruncate(n: number, inject: () => void): () => void {
  type Pragma = (this: SqliteDatabase, src: string, opts?: unknown) => unknown;
  const proto = SqliteDatabase.prototype as unknown as { pragma: Pragma };
  const real = proto.pragma;
  let seen = 0;
  proto.pragma = function (this: SqliteDatabase, src: string, opts?: unknown): unknown {
    if (src === 'wal_checkpoint(TRUNCATE)' && ++seen === n) inject();
    return real.call(this, src, opts);
  };
  return () => {
    proto.pragma = real;
  };
}

describe('stopping capture and stamping the checkout', () => {
  let ts: TestStore;

  before(async () => {
    ts = await openTestStore();
    const src = ts.tmpPath('src.db');
    runSql(src, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
    await create(ts.ctx, 'app', { from: src });
  });
  after(async () => ts.cleanup());

  const live = () => ts.context({ now: () => new Date(), holder: 'daemon-host/1' });

  it('a commit between capture stopping and the stamp leaves the checkout dirty, and the next open keeps it', async () => {
    const session = await Session.open(live(), { db: 'app', branch: 'main' }, {});
    runSql(session.path, "INSERT INTO t(v) VALUES ('flushed');");
    await session.flush({ kind: 'manual' });
    runSql(session.path, "INSERT INTO t(v) VALUES ('captured at close');");
    // The engine's own TRUNCATE is the first; the stamp's frozen read is the second.
    const restore = beforeNthTruncate(2, () => runSql(session.path, "INSERT INTO t(v) VALUES ('slipped in');"));
    try {
      await session.close();
    } finally {
      restore();
    }
    // Close's last flush withdrew the sidecar before capture stopped, so the checkout reads unknown, never clean.
    assert.notEqual(await checkClean(session.path, readSidecar(session.path)), 'clean', 'never stamped clean');
    const head = await exportDump(ts, { db: 'app', branch: 'main' });
    assert.match(head, /captured at close/);
    assert.doesNotMatch(head, /slipped in/, 'capture had stopped: the store does not have it');
    const again = await Session.open(live(), { db: 'app', branch: 'main' }, {});
    try {
      assert.equal(again.warnings.length, 1, 'the slipped-in commit is kept as an undo branch');
      assert.match(again.warnings[0] ?? '', /main-pre-reopen/);
    } finally {
      await again.close();
    }
    assert.match(await exportDump(ts, { db: 'app', branch: 'main-pre-reopen' }), /slipped in/);
  });

  it('a session evicted untouched closes with its checkout still proven clean, written to or not before', async () => {
    for (const written of [false, true]) {
      const session = await Session.open(live(), { db: 'app', branch: 'main' }, {});
      if (written) runSql(session.path, "INSERT INTO t(v) VALUES ('flushed by the eviction');");
      assert.equal(await session.evict(), true);
      await session.close();
      assert.equal(await checkClean(session.path, readSidecar(session.path)), 'clean', `written: ${written}`);
    }
    assert.match(await exportDump(ts, { db: 'app', branch: 'main' }), /flushed by the eviction/);
  });

  it('an evicted session reconnects at once when untouched, and from a rescan as a segment when written', async () => {
    const events: string[] = [];
    const session = await Session.open(
      live(),
      { db: 'app', branch: 'main' },
      {
        onEvent: (type, detail) => events.push(`${type} ${JSON.stringify(detail)}`),
      },
    );
    try {
      runSql(session.path, "INSERT INTO t(v) VALUES ('before eviction');");
      assert.equal(await session.evict(), true);
      assert.equal(session.evicted, true);
      assert.equal(session.needsReconnect, false, 'nothing touched it');
      await session.reconnect();
      assert.match(events.join('\n'), /session_reconnected \{"resumed":true\}/);
      assert.equal(await session.evict(), true);
      // A foreign writer commits and closes: its close checkpoints the -wal into the main file and deletes it.
      for (let i = 0; i < 3; i++) runSql(session.path, `INSERT INTO t(v) VALUES ('while evicted ${i}');`);
      assert.equal(session.needsReconnect, true);
      await session.reconnect();
      assert.match(events.join('\n'), /session_reconnected \{"resumed":false\}/);
      const out = await session.flush({ kind: 'manual' });
      assert.equal(out.kind, 'segment', 'the rescan was compared with the durable head');
    } finally {
      await session.close();
    }
    const head = await exportDump(ts, { db: 'app', branch: 'main' });
    for (const v of ['before eviction', 'while evicted 0', 'while evicted 2']) assert.match(head, new RegExp(v));
  });
});
