// The batch fork: many forks of one fork point, all or nothing. Each fork writes only its own two small objects;
// a refused batch writes nothing, and a batch that fails midway withdraws the forks it made.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { fork, forkMany } from '../../src/ops/fork.js';
import { parseDuration } from '../../src/core/duration.js';
import { faultBackend, type FaultBackend } from '../store/fault-backend.js';
import { CountingBackend } from './counting-backend.js';
import { exportDump, openTestStore, rejectsCode, storeSnapshot, type TestStore } from './harness.js';
import { runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };

async function seeded(ts: TestStore): Promise<void> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('seed');");
  await checkpoint(ts.ctx, MAIN, 'seed');
  runSql(co.path, "INSERT INTO t VALUES ('after the seed');");
  await checkpoint(ts.ctx, MAIN, 'later');
}

const names = (n: number, prefix = 'ep'): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('fork of many names', () => {
  it('makes every fork at one fork point, each with two small objects', async () => {
    let counting: CountingBackend | undefined;
    const ts = await openTestStore({ wrap: (b) => (counting = new CountingBackend(b)) });
    try {
      await seeded(ts);
      const want = await exportDump(ts, { ...MAIN, checkpoint: 'seed' });
      counting?.reset();
      const r = await forkMany(ts.ctx, MAIN, names(40), { at: 'seed', ttl: { kind: 'set', ttl: parseDuration('1h') } });
      assert.deepEqual(r.branches, names(40));
      assert.equal(r.mode, 'shared');
      const all = counting?.of('put') ?? [];
      const puts = all.filter((p) => p.key !== 'offshoot.json');
      assert.equal(puts.length, 80, 'two objects per fork: base.json and the ref');
      assert.ok(all.length - puts.length <= 1, 'the manifest is raised to the shared layout once, not once per fork');
      const bytes = puts.reduce((a, p) => a + (p.bytes ?? 0), 0);
      assert.ok(bytes / 40 <= 1024, `each fork wrote ${bytes / 40} bytes, at most 1 KiB`);
      for (const name of ['ep-0', 'ep-17', 'ep-39']) {
        const { ref } = await ts.store.getRef('app', name);
        assert.equal(ref.head_txid, r.txid);
        assert.equal(ref.ttl, '1h0m0s');
        assert.equal(await exportDump(ts, { db: 'app', branch: name }), want);
      }
    } finally {
      await ts.cleanup();
    }
  });

  it('refuses the whole batch, writing nothing, for a taken, repeated, invalid or undo-point name', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await fork(ts.ctx, MAIN, 'ep-3');
      const before = await storeSnapshot(ts.store);
      const taken = await rejectsCode(forkMany(ts.ctx, MAIN, names(5)), 'ALREADY_EXISTS');
      assert.match(taken.message, /app@ep-3/);
      await rejectsCode(forkMany(ts.ctx, MAIN, ['a', 'b', 'a']), 'INVALID_ARGUMENT');
      await rejectsCode(forkMany(ts.ctx, MAIN, ['a', 'not/a/name']), 'INVALID_NAME');
      await rejectsCode(forkMany(ts.ctx, MAIN, []), 'INVALID_ARGUMENT');
      await rejectsCode(forkMany(ts.ctx, MAIN, ['fine', 'main-pre-rollback']), 'INVALID_NAME');
      assert.deepEqual(await storeSnapshot(ts.store), before, 'no object was written or removed');
    } finally {
      await ts.cleanup();
    }
  });

  it('withdraws the forks it made when one fails midway, and says which one failed', async () => {
    let faults: FaultBackend | undefined;
    const ts = await openTestStore({ wrap: (b) => (faults = faultBackend(b)) });
    try {
      await seeded(ts);
      const branchesBefore = await ts.store.listBranches('app');
      faults?.inject({ method: 'put', key: 'refs/app/ep-12', fault: { status: 503 } });
      const err = await rejectsCode(forkMany(ts.ctx, MAIN, names(30), { at: 'seed' }), 'UNAVAILABLE');
      assert.match(err.message, /app@ep-12/);
      assert.deepEqual(await ts.store.listBranches('app'), branchesBefore, 'every fork of the batch was withdrawn');
    } finally {
      await ts.cleanup();
    }
  });

  it('writes no ref when a base pointer fails, so no ref ever names a missing base.json', async () => {
    let faults: FaultBackend | undefined;
    const ts = await openTestStore({ wrap: (b) => (faults = faultBackend(b)) });
    try {
      await seeded(ts);
      const branchesBefore = await ts.store.listBranches('app');
      faults?.inject({ method: 'put', key: /\/base\.json$/, fault: { status: 503 }, skip: 7, times: 1 });
      const err = await rejectsCode(forkMany(ts.ctx, MAIN, names(20), { at: 'seed' }), 'UNAVAILABLE');
      assert.match(err.message, /fork of app@ep-\d+/);
      assert.equal(faults?.fired.length, 1);
      assert.deepEqual(await ts.store.listBranches('app'), branchesBefore, 'no ref of the batch was written');
      faults?.inject({ method: 'put', key: /\/base\.json$/, fault: { status: 503 }, times: 1 });
      await rejectsCode(fork(ts.ctx, MAIN, 'alone', { at: 'seed' }), 'UNAVAILABLE');
      assert.equal(await ts.store.tryGetRef('app', 'alone'), undefined, 'a single fork writes its ref last too');
      await forkMany(ts.ctx, MAIN, names(20), { at: 'seed' });
      for (const b of await ts.store.listBranches('app')) {
        const { ref } = await ts.store.getRef('app', b);
        if (ref.base !== undefined)
          assert.deepEqual(await ts.store.readBase(ref.lineage), ref.base, `${b}'s base.json`);
      }
    } finally {
      await ts.cleanup();
    }
  });

  it('reports the forks it could not withdraw by name', async () => {
    let faults: FaultBackend | undefined;
    const ts = await openTestStore({ wrap: (b) => (faults = faultBackend(b)) });
    try {
      await seeded(ts);
      faults?.inject({ method: 'put', key: 'refs/app/ep-5', fault: { status: 503 } });
      faults?.inject({ method: 'delete', key: /^refs\/app\/ep-/, fault: { status: 503 } });
      const err = await rejectsCode(forkMany(ts.ctx, MAIN, names(6), { at: 'seed' }), 'UNAVAILABLE');
      assert.match(err.message, /left in the store/);
      const left = (await ts.store.listBranches('app')).filter((b) => b.startsWith('ep-'));
      assert.ok(left.length > 0, 'some forks were made before the failure');
      for (const b of left) assert.match(err.message + err.hint, new RegExp(`app@${b}\\b|and \\d+ more`));
    } finally {
      await ts.cleanup();
    }
  });
});
