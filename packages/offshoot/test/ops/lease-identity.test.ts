// Lease identity and time: holders are random ids (host and pid only for humans), leases expire by their own
// duration on the reader's clock, and the clock-skew bound — lease TTL minus the renewal interval — is exactly
// where a skewed clock starts to see a renewed lease as expired; past it the epoch still fences the old holder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { processSpace } from '../../src/platform/process-space.js';
import { newLeaseHolder, parseLeaseHolder } from '../../src/ops/helpers/context/lease-holder.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { collectGarbage } from '../../src/ops/gc.js';
import { GcLease } from '../../src/ops/helpers/gc/gc-lease.js';
import { fork } from '../../src/ops/fork.js';
import { acquireLease } from '../../src/ops/lease.js';
import { reap } from '../../src/ops/reap.js';
import { touch } from '../../src/ops/touch.js';
import { openTestStore, rejectsCode, type TestStore } from './harness.js';
import { runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };
const TTL_MS = 30_000;
const RENEW_MS = 10_000;

async function seeded(ts: TestStore): Promise<void> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(v); INSERT INTO t VALUES ('seed');");
  await checkpoint(ts.ctx, MAIN, 'seed');
}

/** A context whose clock runs skewMs ahead of (or, negative, behind) the test clock. */
function skewed(ts: TestStore, skewMs: number) {
  return ts.context({ now: () => new Date(ts.clock.now().getTime() + skewMs) });
}

describe('lease identity', () => {
  it('is a random id per process context, recorded with host and pid; the earlier host/pid still parses', () => {
    const a = newLeaseHolder();
    const b = newLeaseHolder();
    assert.notEqual(a, b, 'two holders of one process differ');
    const p = parseLeaseHolder(a);
    assert.equal(p?.pid, process.pid);
    assert.match(p?.id ?? '', /^[0-9a-f]{16}$/);
    assert.deepEqual(parseLeaseHolder('build-7/4242'), {
      host: 'build-7',
      pidns: undefined,
      pid: 4242,
      id: undefined,
      role: undefined,
    });
    assert.equal(parseLeaseHolder(`${a}:at-rest`)?.role, 'at-rest');
    assert.equal(parseLeaseHolder('not a holder'), undefined);
  });

  it('a live lease in the earlier host/pid form is honoured, then taken over once it expires', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await acquireLease(ts.context({ holder: `host-of-old/${process.pid}` }), MAIN, '30s');
      const err = await rejectsCode(touch(ts.ctx, MAIN), 'LEASE_HELD');
      assert.match(err.message, /leased by host-of-old\/\d+ until/);
      ts.clock.advance(TTL_MS + 1);
      await touch(ts.ctx, MAIN);
      assert.equal(
        (await ts.store.getRef('app', 'main')).ref.lease_holder,
        undefined,
        'the command gave its lease back',
      );
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a holder gone from this machine', () => {
  it("loses its lease at once when it was a process of this host and pid namespace; a live one's is kept", async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const dead = spawnSync('true').pid ?? 0;
      await acquireLease(ts.context({ holder: `${processSpace()}/${dead}/0123456789abcdef` }), MAIN, '1h');
      await touch(ts.ctx, MAIN);
      await acquireLease(ts.context({ holder: `${processSpace()}/${process.ppid}/0123456789abcdef` }), MAIN, '1h');
      await rejectsCode(touch(ts.ctx, MAIN), 'LEASE_HELD');
      const far = { db: 'app', branch: 'far' };
      await fork(ts.ctx, MAIN, 'far');
      await acquireLease(ts.context({ holder: `elsewhere:1/${dead}/0123456789abcdef` }), far, '1h');
      await rejectsCode(touch(ts.ctx, far), 'LEASE_HELD');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('clock skew', () => {
  for (const skew of [RENEW_MS, TTL_MS - RENEW_MS - 1000, -TTL_MS]) {
    it(`a holder renewing every ${RENEW_MS / 1000}s keeps its ${TTL_MS / 1000}s lease against a clock ${skew / 1000}s off`, async () => {
      const ts = await openTestStore();
      try {
        await seeded(ts);
        const a = ts.context();
        const b = skewed(ts, skew);
        const first = await acquireLease(a, MAIN, '30s');
        for (let i = 0; i < 3; i++) {
          ts.clock.advance(RENEW_MS - 1);
          await rejectsCode(acquireLease(b, MAIN, '30s'), 'LEASE_HELD');
          await rejectsCode(checkpoint(b, MAIN, `b${i}`), 'LEASE_HELD');
          ts.clock.advance(1);
          assert.equal((await acquireLease(a, MAIN, '30s')).renewed, true);
        }
        assert.equal((await ts.store.getRef('app', 'main')).ref.epoch, first.epoch, 'renewals never bump the epoch');
      } finally {
        await ts.cleanup();
      }
    });
  }

  it('past the bound (TTL minus renewal interval) a fast clock takes the lease, and the epoch fences the old holder', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const a = ts.context();
      const b = skewed(ts, TTL_MS - RENEW_MS + 1000);
      const first = await acquireLease(a, MAIN, '30s');
      ts.clock.advance(RENEW_MS - 1);
      const taken = await acquireLease(b, MAIN, '30s');
      assert.equal(taken.renewed, false);
      assert.ok(taken.epoch > first.epoch, 'the takeover bumped the epoch');
      ts.clock.advance(1);
      await rejectsCode(acquireLease(a, MAIN, '30s'), 'LEASE_HELD');
      const { ref } = await ts.store.getRef('app', 'main');
      assert.equal(ref.lease_holder, b.holder);
      assert.notEqual(ref.epoch, first.epoch, "the old holder's flushes (holder and epoch checked) are fenced");
    } finally {
      await ts.cleanup();
    }
  });

  it('a dead holder loses its lease after its own duration on a slow clock too, never before', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await acquireLease(ts.context(), MAIN, '30s');
      const slow = skewed(ts, -5000);
      ts.clock.advance(TTL_MS + 4000);
      await rejectsCode(touch(slow, MAIN), 'LEASE_HELD');
      ts.clock.advance(1001);
      await touch(slow, MAIN);
    } finally {
      await ts.cleanup();
    }
  });
});

describe('the GC lease', () => {
  it('refuses a second pass while one holds it, expires on its own, and a pass that lost it deletes nothing', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const a = ts.context();
      const b = ts.context();
      const held = await GcLease.acquire(a);
      const busy = await rejectsCode(collectGarbage(b, 0n), 'BUSY');
      assert.ok(busy.message.includes(a.holder), busy.message);
      await held.release();
      await collectGarbage(b, 0n);
      const stale = await GcLease.acquire(a);
      ts.clock.advance(121_000);
      await collectGarbage(b, 0n);
      await rejectsCode(stale.renew(), 'CAS_CONFLICT');
    } finally {
      await ts.cleanup();
    }
  });

  it('a pass that loses the race to a pass which has already finished is BUSY too, naming the winner', async () => {
    // Just before a's compare-and-swap, b takes the lease, runs its pass and releases it: a's write then misses,
    // and what a reads back is a released lease of b's.
    let b: ReturnType<TestStore['context']> | undefined;
    let raced = false;
    const ts = await openTestStore({
      wrap: (backend) =>
        new Proxy(backend, {
          get: (target, prop, receiver) => {
            if (prop !== 'put') return Reflect.get(target, prop, receiver);
            return async (...args: Parameters<typeof target.put>) => {
              if (args[0] === 'gc/lease' && !raced && b !== undefined) {
                raced = true;
                await collectGarbage(b, 0n);
              }
              return target.put(...args);
            };
          },
        }),
    });
    try {
      await seeded(ts);
      const a = ts.context();
      b = ts.context();
      const err = await rejectsCode(collectGarbage(a, 0n), 'BUSY');
      assert.ok(raced, "b ran its pass inside a's acquire");
      assert.match(err.message, /another GC pass is running or has just finished/);
      assert.ok(err.message.includes(b.holder), err.message);
    } finally {
      await ts.cleanup();
    }
  });
});

describe('janitors of several daemons', () => {
  it('reap an expired branch exactly once between them, and leave a leased one alone', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await fork(ts.ctx, MAIN, 'gone', { ttl: { kind: 'set', ttl: 1_000_000_000n } });
      await fork(ts.ctx, MAIN, 'held', { ttl: { kind: 'set', ttl: 1_000_000_000n } });
      await acquireLease(ts.context(), { db: 'app', branch: 'held' }, '1h');
      ts.clock.advance(2000);
      const janitors = [0, 1, 2].map(() => ts.context());
      const reports = await Promise.all(janitors.map((j) => reap(j)));
      assert.deepEqual(
        reports.flatMap((r) => r.reaped),
        ['app@gone'],
        'one janitor reaped it; the others found it gone',
      );
      assert.equal(await ts.store.tryGetRef('app', 'gone'), undefined);
      assert.ok(await ts.store.tryGetRef('app', 'held'), 'a leased branch is not due');
      const again = await Promise.all(janitors.map((j) => reap(j)));
      assert.deepEqual(
        again.flatMap((r) => [...r.reaped, ...r.errors]),
        [],
        'a second round finds nothing to do',
      );
    } finally {
      await ts.cleanup();
    }
  });
});
