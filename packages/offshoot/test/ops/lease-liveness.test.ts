// A lease that stands on a daemon's liveness object is live only while its own expiry is ahead and that object is
// fresh: the one rule every reader goes through (taking the lease, status, the reap deadline). A lease that names no
// object, or one that cannot be read as one, lasts to its own expiry as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { livenessKey } from '../../src/core/keys.js';
import { serializeLiveness } from '../../src/core/liveness.js';
import type { Target } from '../../src/core/target.js';
import { create } from '../../src/ops/create.js';
import { expiryOf } from '../../src/ops/helpers/branch/expiry.js';
import { leaseLive } from '../../src/ops/helpers/branch/branch-ref.js';
import { readLiveness, UNREAD_LIVENESS } from '../../src/ops/helpers/branch/lease-liveness.js';
import { newLeaseHolder } from '../../src/ops/helpers/context/lease-holder.js';
import { LivenessBeacon, STALE_LIVENESS_SWEEP_MS } from '../../src/ops/helpers/lease/liveness-beacon.js';
import { acquireLease, releaseLease } from '../../src/ops/lease.js';
import { status } from '../../src/ops/status.js';
import { openTestStore, rejectsCode, type TestStore } from './harness.js';

const MAIN: Target = { db: 'app', branch: 'main' };
const LIVENESS_MS = 30_000;

describe('leases standing on a liveness object', () => {
  let ts: TestStore;

  before(async () => {
    ts = await openTestStore();
    await create(ts.ctx, 'app');
  });
  after(async () => ts.cleanup());

  const state = async () => (await status(ts.ctx, { dbs: ['app'] })).branches.find((b) => b.branch === 'main');

  it('is refused while the object is fresh and free once it is stale, long before its own expiry', async () => {
    const daemon = ts.context({ holder: newLeaseHolder() });
    // Written once: the test's clock, not a timer, makes it stale.
    const beacon = await LivenessBeacon.start(daemon, LIVENESS_MS, 3_600_000);
    try {
      const held = await acquireLease(daemon, MAIN, '15m', { liveness: beacon.id });
      const outsider = ts.context();
      const refused = await rejectsCode(acquireLease(outsider, MAIN), 'LEASE_HELD');
      assert.match(refused.message, /renewed while its daemon runs/);
      assert.equal((await state())?.state, 'active');

      ts.clock.advance(LIVENESS_MS + 1);
      const { ref } = await ts.store.getRef('app', 'main');
      assert.ok(Date.parse(ref.lease_expiry ?? '') > ts.clock.now().getTime(), 'its own expiry is still ahead');
      assert.equal(leaseLive(ref, ts.clock.now(), UNREAD_LIVENESS), true, 'read as an earlier implementation would');
      assert.equal(leaseLive(ref, ts.clock.now(), await readLiveness(ts.ctx, [ref])), false);
      assert.notEqual((await state())?.state, 'active');
      const taken = await acquireLease(outsider, MAIN);
      assert.equal(taken.epoch, held.epoch + 1, 'the takeover fences the stale holder');
      const now = (await ts.store.getRef('app', 'main')).ref;
      assert.equal(now.lease_holder, outsider.holder);
      assert.equal(now.lease_liveness, undefined, "the outsider's lease stands on nothing");
      await releaseLease(outsider, MAIN);
    } finally {
      await beacon.stop();
    }
  });

  it('ends when the object is gone (a clean stop) and lasts to its expiry when the name is not one', async () => {
    const daemon = ts.context({ holder: newLeaseHolder() });
    const beacon = await LivenessBeacon.start(daemon, LIVENESS_MS, 3_600_000);
    await acquireLease(daemon, MAIN, '15m', { liveness: beacon.id });
    await beacon.stop();
    assert.equal(await ts.store.backend.get(livenessKey(beacon.id)).catch(() => undefined), undefined);
    const { ref } = await ts.store.getRef('app', 'main');
    assert.equal(leaseLive(ref, ts.clock.now(), await readLiveness(ts.ctx, [ref])), false);

    const odd = { ...ref, lease_liveness: '../refs/app/main' };
    assert.equal(leaseLive(odd, ts.clock.now(), await readLiveness(ts.ctx, [odd])), true, 'no object, no shortcut');
    await releaseLease(ts.ctx, MAIN);
  });

  it('counts toward the reap deadline only until the object went stale', async () => {
    const daemon = ts.context({ holder: newLeaseHolder() });
    const beacon = await LivenessBeacon.start(daemon, LIVENESS_MS, 3_600_000);
    try {
      await acquireLease(daemon, MAIN, '15m', { liveness: beacon.id });
      const { ref } = await ts.store.getRef('app', 'main');
      const withTtl = { ...ref, protected: false, ttl: '1h', touched_at: ts.clock.now().toISOString() };
      const liveUntil = ts.clock.now().getTime() + LIVENESS_MS;
      assert.equal(expiryOf(withTtl, await readLiveness(ts.ctx, [withTtl])), liveUntil + 3_600_000);
      assert.equal(expiryOf(withTtl, UNREAD_LIVENESS), Date.parse(ref.lease_expiry ?? '') + 3_600_000);
    } finally {
      await beacon.stop();
      await releaseLease(ts.ctx, MAIN).catch(() => undefined);
    }
  });

  it('a starting daemon removes the objects of daemons killed long ago, and only those', async () => {
    const at = (ms: number) => new Date(ts.clock.now().getTime() + ms).toISOString();
    const old = livenessKey('00000000000000aa');
    const recent = livenessKey('00000000000000bb');
    await ts.store.backend.put(old, serializeLiveness({ holder: 'gone', expiry: at(-STALE_LIVENESS_SWEEP_MS - 1) }));
    await ts.store.backend.put(recent, serializeLiveness({ holder: 'paused', expiry: at(-1000) }));
    const beacon = await LivenessBeacon.start(ts.context({ holder: newLeaseHolder() }), LIVENESS_MS, 3_600_000);
    await beacon.stop();
    const keys = (await ts.store.backend.list('liveness/')).map((o) => o.key);
    assert.deepEqual(keys, [recent]);
  });
});
