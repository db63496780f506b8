// `status <db>` through a database's ref index: the same report as reading every ref, and every change to a
// branch (fork, TTL, protection, destroy) in the next status, whichever process made it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { refIndexPath } from '../../src/ops/helpers/context/paths.js';
import { setProtected } from '../../src/ops/protect.js';
import { status, type StatusReport } from '../../src/ops/status.js';
import { touch } from '../../src/ops/touch.js';
import { makeContext, type OpsContext } from '../../src/ops/helpers/context/context.js';
import { LocalBackend } from '../../src/store/local/local-backend.js';
import { Store } from '../../src/store/store.js';
import { openTestStore, type TestStore } from './harness.js';

describe('status <db> through the ref index', () => {
  let ts: TestStore;
  let index: string;
  before(async () => {
    ts = await openTestStore();
    await create(ts.ctx, 'app');
    await create(ts.ctx, 'other');
    for (const name of ['a', 'b', 'c']) await fork(ts.ctx, { db: 'app', branch: 'main' }, name);
    index = refIndexPath(ts.ctx.checkoutRoot, 'app');
  });
  after(() => ts.cleanup());

  // As if nothing had changed in the database's refs for an hour: its index may be written.
  const quiet = (): void => {
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(path.join(ts.dir, 'store', 'refs', 'app'), past, past);
  };
  // The report read from every ref, with no index to serve it.
  const unindexed = async (): Promise<StatusReport> => {
    rmSync(index, { force: true });
    const report = await status(ts.ctx, { db: 'app' });
    assert.equal(existsSync(index), false, 'a database just changed is not indexed');
    return report;
  };

  it('reports what reading every ref reports, and only the named database', async () => {
    const want = await unindexed();
    quiet();
    assert.deepEqual(await status(ts.ctx, { db: 'app' }), want);
    assert.equal(existsSync(index), true);
    assert.deepEqual(await status(ts.ctx, { db: 'app' }), want);
    assert.deepEqual(
      want.branches.map((b) => b.branch),
      ['a', 'b', 'c', 'main'],
    );
    const whole = await status(ts.ctx);
    assert.deepEqual(
      whole.branches.filter((b) => b.db === 'app'),
      want.branches,
    );
  });

  for (const [what, change] of [
    ['a fork', (t: TestStore) => fork(t.ctx, { db: 'app', branch: 'a' }, 'd')],
    ['a TTL set', (t: TestStore) => touch(t.ctx, { db: 'app', branch: 'b' }, { kind: 'set', ttl: 3_600_000_000_000n })],
    ['a protection', (t: TestStore) => setProtected(t.ctx, { db: 'app', branch: 'c' }, true)],
    ['a destroy', (t: TestStore) => destroy(t.ctx, { db: 'app', branch: 'a' }, { force: true })],
  ] as const) {
    it(`${what} shows in the next status of an indexed database`, async () => {
      quiet();
      await status(ts.ctx, { db: 'app' });
      assert.equal(existsSync(index), true);
      await change(ts);
      const got = await status(ts.ctx, { db: 'app' });
      assert.deepEqual(got, await unindexed());
    });
  }

  it('a database with an unreadable ref is not indexed, so the ref restored in place shows at once', async () => {
    const file = path.join(ts.dir, 'store', 'refs', 'app', 'b');
    const good = readFileSync(file);
    writeFileSync(file, '{"torn');
    quiet();
    const torn = await status(ts.ctx, { db: 'app' });
    assert.deepEqual(
      torn.unreadable.map((u) => [u.branch, u.code]),
      [['b', 'CORRUPT']],
    );
    assert.equal(existsSync(index), false);
    writeFileSync(file, good);
    quiet();
    const restored = await status(ts.ctx, { db: 'app' });
    assert.deepEqual(restored.unreadable, []);
    assert.ok(restored.branches.some((b) => b.branch === 'b'));
  });

  it('a database whose refs are all gone is not found, whatever its index held', async () => {
    quiet();
    await status(ts.ctx, { db: 'other' });
    rmSync(path.join(ts.dir, 'store', 'refs', 'other'), { recursive: true });
    await assert.rejects(status(ts.ctx, { db: 'other' }), { code: 'NOT_FOUND' });
  });
});

describe("the whole store's status, one indexed database at a time", () => {
  let ts: TestStore;
  let plain: OpsContext;
  // Names that sort differently alone and as the keys' prefixes ('-' and '.' sort before '/', '_' after).
  const DBS = ['a', 'a-b', 'a.b', 'a_b', 'b'];
  before(async () => {
    ts = await openTestStore();
    for (const db of DBS) {
      await create(ts.ctx, db);
      await fork(ts.ctx, { db, branch: 'main' }, 'x');
    }
    // The same store through a backend with no index: the whole store listed and read ref by ref.
    const backend = new Proxy(new LocalBackend(path.join(ts.dir, 'store')), {
      get(target, key) {
        if (key === 'listTexts' || key === 'listChildren') return undefined;
        const v: unknown = Reflect.get(target, key, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const store = await Store.open(ts.spec, { backend });
    plain = makeContext(store, ts.dir, { now: ts.clock.now, warn: () => undefined });
  });
  after(async () => {
    await plain.store.close();
    await ts.cleanup();
  });

  const quiet = (): void => {
    const past = new Date(Date.now() - 3_600_000);
    for (const db of DBS) utimesSync(path.join(ts.dir, 'store', 'refs', db), past, past);
  };

  it('reports what listing the whole store reports, in the same order, before and after indexing', async () => {
    const want = await status(plain);
    assert.deepEqual(
      want.branches.map((b) => `${b.db}/${b.branch}`),
      ['a-b/main', 'a-b/x', 'a.b/main', 'a.b/x', 'a/main', 'a/x', 'a_b/main', 'a_b/x', 'b/main', 'b/x'],
    );
    assert.deepEqual(await status(ts.ctx), want);
    quiet();
    assert.deepEqual(await status(ts.ctx), want);
    for (const db of DBS) assert.equal(existsSync(refIndexPath(ts.ctx.checkoutRoot, db)), true);
    assert.deepEqual(await status(ts.ctx), want);
    assert.deepEqual(
      await status(ts.ctx, { states: ['idle'], limit: 3 }),
      await status(plain, { states: ['idle'], limit: 3 }),
    );
  });

  it('a change to one indexed database shows in the next status of the whole store', async () => {
    quiet();
    await status(ts.ctx);
    await fork(ts.ctx, { db: 'a.b', branch: 'x' }, 'y');
    await destroy(ts.ctx, { db: 'b', branch: 'x' }, { force: true });
    const got = await status(ts.ctx);
    assert.deepEqual(got, await status(plain));
    assert.ok(got.branches.some((b) => b.db === 'a.b' && b.branch === 'y'));
    assert.ok(!got.branches.some((b) => b.db === 'b' && b.branch === 'x'));
  });
});
