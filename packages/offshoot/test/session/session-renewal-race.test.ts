// A session's lease renewals and its flushes write the same ref. On a loaded machine a ref write is slow and the
// renewal timer keeps firing, so without serialisation the renewals win every compare-and-swap a flush attempts and
// the flush fails with CAS_CONFLICT ("changed concurrently") against nobody but its own session. Here every store
// write is slowed down and renewals are due every millisecond: the flushes must still all land, none of them
// retried past a renewal, and the lease must keep being renewed meanwhile.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { fail } from '../../src/core/errors.js';
import { parseDataKey } from '../../src/core/keys.js';
import { create } from '../../src/ops/create.js';
import { Session } from '../../src/session/session.js';
import type { Body, PutCondition } from '../../src/store/backend.js';
import { CountingBackend } from '../ops/counting-backend.js';
import { exportDump, openTestStore, type TestStore } from '../ops/harness.js';
import { runSql } from '../ops/sqlite-cli.js';

const REF = 'refs/race/main';

/** A store whose writes are slow (as under load), and whose next segment put can land with its answer lost. */
class SlowRefs extends CountingBackend {
  /** Compare-and-swaps of the ref that met a newer version. */
  conflicts = 0;
  /** Ref writes that only moved the lease expiry: renewals. */
  renewals = 0;
  loseNextSegmentAnswer = false;
  private last: Record<string, unknown> | undefined;

  override async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    // Slowness injected into the store, not synchronisation: renewals fall due while any write is in flight.
    await sleep(3);
    if (key === REF && body instanceof Uint8Array) {
      const next = JSON.parse(Buffer.from(body).toString('utf8')) as Record<string, unknown>;
      try {
        const etag = await super.put(key, body, cond);
        if (this.last !== undefined && onlyLeaseMoved(this.last, next)) this.renewals++;
        this.last = next;
        return etag;
      } catch (err) {
        this.conflicts++;
        throw err;
      }
    }
    const etag = await super.put(key, body, cond);
    if (this.loseNextSegmentAnswer && parseDataKey(key)?.kind === 'segment') {
      this.loseNextSegmentAnswer = false;
      throw fail('UNAVAILABLE', `put ${key} (injected): the answer was lost`, { retryable: true, hint: 'retry' });
    }
    return etag;
  }
}

function onlyLeaseMoved(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const rest = (r: Record<string, unknown>) => JSON.stringify({ ...r, lease_expiry: undefined, generation: undefined });
  return a.lease_expiry !== b.lease_expiry && rest(a) === rest(b);
}

describe('session lease renewals beside flushes', () => {
  let ts: TestStore;
  let slow: SlowRefs;

  before(async () => {
    ts = await openTestStore({ wrap: (b) => (slow = new SlowRefs(b)) });
    const src = ts.tmpPath('src.db');
    runSql(src, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
    await create(ts.ctx, 'race', { from: src });
  });
  after(async () => ts.cleanup());

  it('renewals due every millisecond never make a flush (or its epoch bump past an orphan) fail', async () => {
    const live = ts.context({ now: () => new Date(), holder: 'daemon-host/1' });
    const session = await Session.open(live, { db: 'race', branch: 'main' }, { renewEveryMs: 1 });
    const openedAt = session.epoch;
    try {
      for (let i = 1; i <= 12; i++) {
        runSql(session.path, `INSERT INTO t(v) VALUES ('row ${i}');`);
        if (i === 6) {
          // The head object lands but the flush hears a failure: the retry meets its own orphan and bumps the epoch.
          slow.loseNextSegmentAnswer = true;
          await assert.rejects(session.flush({ kind: 'manual' }), /answer was lost/);
        }
        const conflictsBefore = slow.conflicts;
        const out = await session.flush({ kind: 'manual' });
        assert.equal(out.txid, session.durableTxid);
        // Only a write prepared before the lock (the head read before the upload) may meet one renewal.
        assert.ok(slow.conflicts - conflictsBefore <= 2, `flush ${i}: ${slow.conflicts - conflictsBefore} conflicts`);
      }
      assert.equal(session.epoch, openedAt + 1, 'the orphan moved the session to a fresh epoch');
      assert.ok(slow.renewals >= 12, `the lease was renewed throughout (${slow.renewals} renewals)`);
      const { ref } = await ts.store.getRef('race', 'main');
      assert.equal(ref.head_txid, session.durableTxid);
      assert.equal(ref.lease_holder, 'daemon-host/1');
    } finally {
      await session.close();
    }
    const rows = (await exportDump(ts, { db: 'race', branch: 'main' })).match(/INSERT INTO t VALUES/g) ?? [];
    assert.equal(rows.length, 12, 'the head restores every row flushed');
  });
});
