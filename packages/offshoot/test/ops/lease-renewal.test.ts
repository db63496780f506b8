// An at-rest command keeps its branch lease while it runs longer than the lease (a checkpoint or compact of a large
// database): renewals by compare-and-swap every third of the lease. A command whose renewal finds the lease taken by
// another holder fails LEASE_LOST before it moves the ref. The slow step is a data upload held at a gate, the lease
// lasts 300 ms, and time is judged on injected clocks, so nothing here waits for a lease to run out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDuration } from '../../src/core/duration.js';
import { hasCode } from '../../src/core/errors.js';
import type { Ref } from '../../src/core/ref.js';
import type { Target } from '../../src/core/target.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { makeContext, type OpsContext } from '../../src/ops/helpers/context/context.js';
import { touch } from '../../src/ops/touch.js';
import type { Backend, Body, PutCondition } from '../../src/store/backend.js';
import { Store } from '../../src/store/store.js';
import { until } from '../daemon/daemon-process.js';
import { exportDump, openTestStore, rejectsCode, type TestStore } from './harness.js';
import { dump, runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };
const LEASE_MS = 300;
const REF = 'refs/app/main';
const HOUR = { kind: 'set', ttl: parseDuration('1h') } as const;

/** A backend whose data uploads wait at a gate while it is closed, and which records failed writes of the ref. */
class Gate {
  closed = false;
  waiting = 0;
  refConflicts = 0;
  private open: () => void = () => undefined;
  private opened = Promise.resolve();

  close(): void {
    this.closed = true;
    this.opened = new Promise((r) => (this.open = r));
  }

  release(): void {
    this.closed = false;
    this.open();
  }

  wrap(b: Backend): Backend {
    return new Proxy(b, {
      get: (target, prop, receiver) => {
        if (prop !== 'put') return Reflect.get(target, prop, receiver);
        return async (key: string, body: Body, cond?: PutCondition) => {
          if (this.closed && key.startsWith('data/')) {
            this.waiting++;
            await this.opened;
          }
          try {
            return await target.put(key, body, cond);
          } catch (err) {
            if (key === REF && hasCode(err, 'CAS_CONFLICT')) this.refConflicts++;
            throw err;
          }
        };
      },
    });
  }
}

async function seeded(ts: TestStore): Promise<string> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(v); INSERT INTO t VALUES ('seed');");
  await checkpoint(ts.ctx, MAIN, 'seed');
  runSql(co.path, "INSERT INTO t VALUES ('long');");
  return co.path;
}

/**
 * With a's command waiting at the gate: moves the clock an hour past the lease's first expiry, waits for a renewal,
 * and checks another holder is refused naming a. Returns the ref as taken and as renewed.
 */
async function heldPastExpiry(
  ts: TestStore,
  gate: Gate,
  a: OpsContext,
  t: Target,
): Promise<{ taken: Ref; renewed: Ref }> {
  await until(() => gate.waiting > 0, 'the command to reach an upload');
  const taken = (await ts.store.getRef(t.db, t.branch)).ref;
  assert.equal(taken.lease_holder, a.holder);
  ts.clock.advance(60 * 60_000);
  await until(
    async () => Date.parse((await ts.store.getRef(t.db, t.branch)).ref.lease_expiry ?? '') > ts.clock.now().getTime(),
    'a renewal past the first expiry',
  );
  const renewed = (await ts.store.getRef(t.db, t.branch)).ref;
  assert.equal(renewed.lease_holder, a.holder);
  assert.equal(renewed.epoch, taken.epoch, 'a renewal never bumps the epoch');
  assert.equal(renewed.head_txid, taken.head_txid);
  const err = await rejectsCode(touch(ts.context(), t, HOUR), 'LEASE_HELD');
  assert.ok(err.message.includes(a.holder), err.message);
  return { taken, renewed };
}

describe('an at-rest command that outlives its lease', () => {
  it('renews it while it runs: another holder is refused past the first expiry, and the command lands', async () => {
    const gate = new Gate();
    const ts = await openTestStore({ wrap: (b) => gate.wrap(b) });
    let running: Promise<{ kind: string }> = Promise.resolve({ kind: 'none' });
    try {
      const path = await seeded(ts);
      const a = ts.context({ leaseTtlMs: LEASE_MS });
      gate.close();
      running = checkpoint(a, MAIN, 'long');
      const { taken, renewed } = await heldPastExpiry(ts, gate, a, MAIN);
      gate.release();
      const res = await running;
      assert.equal(res.kind, 'segment');
      const after = (await ts.store.getRef('app', 'main')).ref;
      assert.equal(after.head_txid, taken.head_txid + 1);
      assert.ok(after.checkpoints.long, 'the checkpoint is recorded');
      assert.equal(after.lease_holder, undefined, 'the lease is given back');
      assert.ok((after.generation ?? 0) > (renewed.generation ?? 0), 'the generation only grows');
      assert.equal(await exportDump(ts, MAIN), dump(path));
    } finally {
      gate.release();
      await running.catch(() => undefined);
      await ts.cleanup();
    }
  });

  it('compact too: a shared fork copied past its first expiry is cut loose under the renewed lease', async () => {
    const gate = new Gate();
    const ts = await openTestStore({ wrap: (b) => gate.wrap(b) });
    let running: Promise<{ compacted: boolean }> = Promise.resolve({ compacted: false });
    try {
      await seeded(ts);
      await checkpoint(ts.ctx, MAIN, 'long');
      const f = { db: 'app', branch: 'f' };
      await fork(ts.ctx, MAIN, 'f');
      const a = ts.context({ leaseTtlMs: LEASE_MS });
      gate.close();
      running = compact(a, f);
      const { taken } = await heldPastExpiry(ts, gate, a, f);
      gate.release();
      assert.equal((await running).compacted, true);
      const after = (await ts.store.getRef('app', 'f')).ref;
      assert.notEqual(after.lineage, taken.lineage, 'the branch is repointed to its own lineage');
      assert.equal(after.base, undefined);
      assert.equal(after.lease_holder, undefined);
      assert.equal(await exportDump(ts, f), await exportDump(ts, MAIN));
    } finally {
      gate.release();
      await running.catch(() => undefined);
      await ts.cleanup();
    }
  });

  it('fails LEASE_LOST once a renewal finds the lease taken, and never moves the ref', async () => {
    const gate = new Gate();
    const ts = await openTestStore({ wrap: (b) => gate.wrap(b) });
    let running: Promise<unknown> = Promise.resolve();
    // The other holder is another machine: its own store client, and a clock an hour ahead (the lease has run out).
    const elsewhere = await Store.open(ts.spec);
    try {
      await seeded(ts);
      const a = ts.context({ leaseTtlMs: LEASE_MS });
      const b = makeContext(elsewhere, ts.tmpPath('far'), {
        now: () => new Date(ts.clock.now().getTime() + 60 * 60_000),
        warn: () => undefined,
      });
      const before = (await ts.store.getRef('app', 'main')).ref;
      gate.close();
      running = checkpoint(a, MAIN, 'long');
      await until(() => gate.waiting > 0, 'the checkpoint to reach its upload');
      const conflicts = gate.refConflicts;
      await touch(b, MAIN, HOUR);
      const left = await ts.store.getRef('app', 'main');
      await until(() => gate.refConflicts > conflicts, 'a renewal to find the lease taken');
      gate.release();
      const err = await rejectsCode(running, 'LEASE_LOST');
      assert.match(err.message, /lost its branch lease while it ran/);
      const now = await ts.store.getRef('app', 'main');
      assert.equal(now.etag, left.etag, 'the ref is exactly as the other holder left it');
      assert.equal(now.ref.head_txid, before.head_txid);
      assert.equal(now.ref.checkpoints.long, undefined);
      assert.equal(now.ref.ttl, '1h0m0s');
      const retried = await checkpoint(ts.context(), MAIN, 'long');
      assert.equal(retried.txid, before.head_txid + 1, 'a retry lands over the lost attempt’s orphan');
    } finally {
      gate.release();
      await running.catch(() => undefined);
      await elsewhere.close();
      await ts.cleanup();
    }
  });

  it('gives the lease back from what it wrote, and reads the ref again only when someone wrote it since', async () => {
    // After the commit lands, a write this command's guard never sees changes the ref (here: the TTL) and keeps the
    // lease as it was: the give-back's compare-and-swap then misses, and the ref is read and released with it.
    let foreign = false;
    let refReads = 0;
    const ts = await openTestStore({
      wrap: (b) =>
        new Proxy(b, {
          get: (target, prop, receiver) => {
            if (prop === 'get')
              return (key: string) => {
                if (key === REF) refReads++;
                return target.get(key);
              };
            if (prop !== 'put') return Reflect.get(target, prop, receiver);
            return async (key: string, body: Body, cond?: PutCondition) => {
              const etag = await target.put(key, body, cond);
              const text = body instanceof Uint8Array ? Buffer.from(body).toString('utf8') : '';
              if (foreign && key === REF && text.includes('"late"')) {
                foreign = false;
                const changed = { ...JSON.parse(text), ttl: '2h0m0s' };
                await target.put(key, Buffer.from(JSON.stringify(changed)), { ifMatch: etag });
              }
              return etag;
            };
          },
        }),
    });
    try {
      await seeded(ts);
      refReads = 0;
      const quiet = await checkpoint(ts.context(), MAIN, 'quiet');
      assert.equal(refReads, 2, 'unchallenged, the lease is taken on one read and given back on none');
      runSql((await checkout(ts.ctx, MAIN)).path, "INSERT INTO t VALUES ('late');");
      refReads = 0;
      foreign = true;
      const late = await checkpoint(ts.context(), MAIN, 'late');
      assert.equal(foreign, false, 'the foreign write happened');
      const after = (await ts.store.getRef('app', 'main')).ref;
      assert.equal(after.head_txid, late.txid);
      assert.ok(after.checkpoints.quiet && after.checkpoints.late);
      assert.equal(after.ttl, '2h0m0s', 'the foreign change is kept');
      assert.equal(after.lease_holder, undefined, 'the lease is given back all the same');
      assert.equal(after.lease_expiry, undefined);
      assert.ok(refReads > 2, `the give-back read the ref (${refReads} reads)`);
      assert.ok(quiet.txid < late.txid);
    } finally {
      await ts.cleanup();
    }
  });
});
