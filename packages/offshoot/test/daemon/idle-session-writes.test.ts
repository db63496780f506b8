// What a daemon's idle sessions write to the store: its liveness object, once a period, and nothing per session.
// A thousand sessions (all but a few evicted) idle through several periods; the store requests are counted through
// a wrapper around the real local backend. Their own leases last minutes and need no renewal in that time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseDuration } from '../../src/core/duration.js';
import { create } from '../../src/ops/create.js';
import { forkMany } from '../../src/ops/fork.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { Body, PutCondition } from '../../src/store/backend.js';
import { canonicalStore } from '../../src/store/store-spec.js';
import { CountingBackend } from '../ops/counting-backend.js';
import { openTestStore, type TestStore } from '../ops/harness.js';
import { runSql } from '../ops/sqlite-cli.js';
import { LineClient } from './daemon-process.js';

const SESSIONS = 1000;
const PERIODS = 3;

/** Counts requests, and wakes a waiter once a number of liveness writes have landed. */
class LivenessCounting extends CountingBackend {
  private waiters: Array<{ n: number; resolve: () => void }> = [];

  override async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    const etag = await super.put(key, body, cond);
    if (key.startsWith('liveness/')) {
      const n = this.of('put', 'liveness/').length;
      this.waiters = this.waiters.filter((w) => (n >= w.n ? (w.resolve(), false) : true));
    }
    return etag;
  }

  /** Resolves once n liveness writes were counted since the last reset. */
  livenessWrites(n: number): Promise<void> {
    if (this.of('put', 'liveness/').length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }
}

describe('idle sessions and the store', { timeout: 600_000 }, () => {
  let ts: TestStore;
  let counting!: LivenessCounting;
  let daemon: Daemon;

  before(async () => {
    ts = await openTestStore({ wrap: (b) => (counting = new LivenessCounting(b)) });
    const src = ts.tmpPath('src.db');
    runSql(src, 'CREATE TABLE t(x);');
    await create(ts.ctx, 'app', { from: src });
    const names = Array.from({ length: SESSIONS }, (_, i) => `s${i}`);
    await forkMany(ts.ctx, { db: 'app', branch: 'main' }, names);
    daemon = await Daemon.start(
      ts.store,
      ts.dir,
      {
        store: canonicalStore(ts.spec),
        socket: ts.tmpPath('d.sock'),
        flushEveryMs: 0,
        snapshotEvery: 16,
        reapEveryMs: 0,
        gcGrace: parseDuration('1h'),
        roCacheBudget: 0,
        maxOpen: 8,
        // A liveness object of 20 s rewritten every second: a write ten times as late as due would be needed to let it
        // lapse on a loaded machine (a lapse renews every session's lease, rightly). The leases last 15 minutes.
        leaseTtlMs: 20_000,
        renewEveryMs: 1000,
        log: () => undefined,
      },
      'test',
    );
    const sock = daemon.addresses.socket;
    await Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        const c = await LineClient.connect(sock);
        try {
          for (let i = lane; i < SESSIONS; i += 4) {
            const res = await c.request({ op: 'open', db: 'app', branch: `s${i}` });
            assert.equal(res.ok, true, JSON.stringify(res));
          }
        } finally {
          c.close();
        }
      }),
    );
  });

  after(async () => {
    await daemon?.shutdown();
    await ts?.cleanup();
  });

  test(`${SESSIONS} idle sessions write one liveness object a period and nothing per session`, async () => {
    // From one liveness write to the PERIODS-th after it: whole periods only.
    counting.reset();
    await counting.livenessWrites(1);
    counting.reset();
    await counting.livenessWrites(PERIODS);
    const writes = counting.calls.filter((c) => c.op === 'put' || c.op === 'delete' || c.op === 'deleteMany');
    assert.deepEqual(
      writes.map((c) => c.key),
      Array.from({ length: PERIODS }, () => writes[0]?.key),
      `only the liveness object was written: ${writes.map((c) => c.key).join(', ')}`,
    );
    assert.equal(counting.of('put', 'refs/').length, 0, 'no lease renewal of any session');
  });
});
