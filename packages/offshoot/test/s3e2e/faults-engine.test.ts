// Engine-level fault injection over the real S3 backend: every put and every read of checkpoint, fork, rollback,
// promote and gc fails in turn, one call index after another, until a run completes with no fault left to fire.
// The failures are 412, 409, 500, 503, a timeout and a cut connection; each sweep over the call indexes hands them
// out in rotation, and two sweeps per method (in two shapes of the operation) give every index two different
// classes of failure. After each injected failure the operation must have surfaced a typed OffshootError, every
// branch head and checkpoint must still materialize to the model's `.dump` (no ref names a missing or torn object),
// and a fault-free re-run must finish the job.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { hasCode, OffshootError, type ErrorCode } from '../../src/core/errors.js';
import { lineagePrefix, refKey } from '../../src/core/keys.js';
import type { Target } from '../../src/core/target.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { compactBranch, compactChain } from '../../src/ops/helpers/chain/chain-writer.js';
import { STALE_CLAIM_MS } from '../../src/ops/helpers/gc/clear-claims.js';
import type { OpsContext } from '../../src/ops/helpers/context/context.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { promote } from '../../src/ops/promote.js';
import { rollback } from '../../src/ops/rollback.js';
import { dump, emptyDump, runSql } from '../ops/sqlite-cli.js';
import { faultBackend, type BackendMethod, type Fault, type FaultBackend } from '../store/fault-backend.js';
import { s3Unavailable } from '../store/s3-test-env.js';
import { branchAt, DumpVerifier, type BranchDumps, type DumpModel, type StateModel } from '../ops/dump-model.js';
import { openS3TestStore, type S3TestStore } from './s3-store.js';

/**
 * The failures, in the order a sweep hands them to successive call indexes. The engine sees four classes (412, 409,
 * UNAVAILABLE from 500/503/cut, TIMEOUT); this order puts an UNAVAILABLE opposite each of the others, so the two
 * sweeps (offset by half the list) always give an index two different classes.
 */
const FAULTS: ReadonlyArray<{ label: string; fault: Fault }> = [
  { label: '412', fault: { status: 412 } },
  { label: '500', fault: { status: 500 } },
  { label: '409', fault: { status: 409 } },
  { label: '503', fault: { status: 503 } },
  { label: 'timeout', fault: { timeout: true, afterMs: 2 } },
  { label: 'cut', fault: { cut: true } },
];

/** The two sweeps per method: where in FAULTS each starts, and which shape of the operation it runs. */
const SWEEPS: ReadonlyArray<{ offset: number; variant: 0 | 1 }> = [
  { offset: 0, variant: 0 },
  { offset: FAULTS.length / 2, variant: 1 },
];

/** Writes, and the two ways the engine reads: whole objects (refs, pointers) and streams (LTX data). */
const METHODS: readonly BackendMethod[] = ['put', 'get', 'getStream'];

/** The codes an operation may surface for each injected failure: the failure's own class, never INTERNAL or a raw SDK error. */
function surfacedAs(fault: Fault): ErrorCode[] {
  if ('timeout' in fault) return ['TIMEOUT'];
  if ('status' in fault && (fault.status === 412 || fault.status === 409)) return ['CAS_CONFLICT', 'ALREADY_EXISTS'];
  return ['UNAVAILABLE'];
}

/** No operation here makes this many calls of one method; reaching it means the loop never ends. */
const MAX_CALLS = 100;

const HOUR_MS = 3_600_000;
const main: Target = { db: 'app', branch: 'main' };
const branch = (name: string): Target => ({ db: 'app', branch: name });

/** One scenario's store, model and verifier. */
interface Bench {
  ts: S3TestStore;
  fb: FaultBackend;
  model: DumpModel;
  verifier: DumpVerifier;
  /**
   * The safety forks as last observed (etag and lineage), to tell a rewritten undo point from an old one and from
   * the old one put back by a failed operation (a new etag, the old lineage).
   */
  etags: Map<string, { etag: string; lineage: string }>;
}

/** One run of the operation under test, prepared (without faults) by its scenario. */
interface Attempt {
  /** Runs the operation; resolves false when it finished but reported part of its work as failed. */
  run(ctx: OpsContext): Promise<boolean | undefined>;
  /** Reads the store and moves the model to whatever landed; true once the operation's whole effect is in. */
  observe(): Promise<boolean>;
  /** What a later, fault-free run does to finish the job (default: run again). */
  recover?(ctx: OpsContext): Promise<unknown>;
  /** Fault-free tidying once the attempt is settled. */
  done?(): Promise<void>;
}

/**
 * One operation under test, built fresh for each sweep over a fresh store. `variant` picks one of two shapes of
 * the operation (e.g. shared or materialized) and is fixed for a sweep, so its runs all make the same calls.
 */
interface Scenario {
  /** The operation takes effect in one compare-and-swap: a run that reports failure must not have landed. */
  atomic: boolean;
  /** Engine settings for the sweep's store. */
  options?: { snapshotEvery?: number; layout?: number };
  setup(b: Bench): Promise<void>;
  next(b: Bench, k: number): Promise<Attempt>;
}

function model(b: Bench, t: Target): BranchDumps {
  const m = b.model.get(`${t.db}@${t.branch}`);
  assert.ok(m, `the model has ${t.db}@${t.branch}`);
  return m;
}

/** A small write to a checkout, in process: the many runs of a sweep cannot afford a sqlite3 process each. */
function write(path: string, k: number): void {
  const db = openDatabase(path);
  try {
    db.prepare("INSERT INTO t(v) VALUES (?), (printf('%.300c', ?))").run(`row ${k}`, 'abcdefgh'[k % 8]);
  } finally {
    db.close();
  }
}

/** A checkpoint taken without faults, recorded in the model; returns the state it made. */
async function commit(b: Bench, t: Target, name: string, path: string): Promise<StateModel> {
  const r = await checkpoint(b.ts.ctx, t, name);
  const m = model(b, t);
  m.head = { txid: r.txid, dump: dump(path) };
  m.checkpoints.set(name, { ...m.head });
  return { ...m.head };
}

/** app@main with a table, checked out; returns the checkout path. */
async function seed(b: Bench): Promise<string> {
  const { ctx } = b.ts;
  await create(ctx, 'app');
  b.model.set('app@main', branchAt({ txid: 1, dump: emptyDump(b.ts.tmpPath('empty.db')) }, 'init'));
  const co = await checkout(ctx, main);
  runSql(co.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
  await commit(b, main, 'schema', co.path);
  return co.path;
}

/**
 * Reads a branch whose checkout held uncheckpointed edits (`pending`, the content at head+1) before an operation
 * that checkpoints them implicitly; moves the model's head if that checkpoint landed. Returns the edits still pending.
 */
async function settleImplicit(b: Bench, t: Target, pending: string | undefined): Promise<string | undefined> {
  const m = model(b, t);
  const { ref } = await b.ts.store.getRef(t.db, t.branch);
  if (ref.head_txid === m.head.txid) return pending;
  assert.ok(pending !== undefined, `${t.branch} moved though its checkout was clean`);
  assert.equal(ref.head_txid, m.head.txid + 1, `${t.branch}: an implicit checkpoint lands at head+1`);
  m.head = { txid: ref.head_txid, dump: pending };
  return undefined;
}

/** The earlier undo points a replace kept aside as `<safety>-<n>`, each the only copy of its state. */
async function keptAside(b: Bench, t: Target, safety: string): Promise<string[]> {
  const names = await b.ts.store.listBranches(t.db);
  return names.filter((n) => n.startsWith(`${safety}-`) && /^[0-9]+$/.test(n.slice(safety.length + 1)));
}

/**
 * Destroys the undo points kept aside so far, as a user done with them would: every run replaces the undo point, and
 * a chain that grew by one a run would make each run's calls grow with it, so a sweep would never end.
 */
async function dropKeptAside(b: Bench, t: Target, safety: string): Promise<void> {
  for (const name of await keptAside(b, t, safety)) {
    await destroy(b.ts.ctx, { db: t.db, branch: name });
    b.model.delete(`${t.db}@${name}`);
    b.etags.delete(name);
  }
}

/**
 * The observation shared by rollback and promote: `t` is repointed to `landed` (a fresh lineage) after its pending
 * edits are checkpointed and its head is kept as the `safety` branch. Any mix of those steps may have landed.
 */
async function repointObserver(
  b: Bench,
  t: Target,
  safety: string,
  landed: BranchDumps,
  pendingEdits: string,
): Promise<() => Promise<boolean>> {
  const m = model(b, t);
  const { lineage } = (await b.ts.store.getRef(t.db, t.branch)).ref;
  const states = new Map<number, string>([
    [m.head.txid, m.head.dump],
    [m.head.txid + 1, pendingEdits],
  ]);
  let pending: string | undefined = pendingEdits;
  return async () => {
    const { ref } = await b.ts.store.getRef(t.db, t.branch);
    const undo = await b.ts.store.tryGetRef(t.db, safety);
    const seen = b.etags.get(safety);
    if (undo !== undefined && undo.etag !== seen?.etag) {
      b.etags.set(safety, { etag: undo.etag, lineage: undo.ref.lineage });
      // The old lineage under a new etag is the previous undo point put back by a failed run: the model holds it.
      if (undo.ref.lineage !== seen?.lineage) {
        // The undo point it replaced held the only copy of its state, so the run kept that as <safety>-<n>.
        const earlier = b.model.get(`${t.db}@${safety}`);
        if (earlier !== undefined)
          for (const name of await keptAside(b, t, safety))
            if (!b.model.has(`${t.db}@${name}`))
              b.model.set(`${t.db}@${name}`, { head: { ...earlier.head }, checkpoints: new Map(earlier.checkpoints) });
        // Rewritten by this run: it holds the head the branch had then, implicit checkpoint included or not.
        const d = states.get(undo.ref.head_txid);
        assert.ok(d !== undefined, `${safety} is at txid ${undo.ref.head_txid}, not a head ${t.branch} had`);
        b.model.set(`${t.db}@${safety}`, branchAt({ txid: undo.ref.head_txid, dump: d }, 'fork'));
      }
    }
    if (b.model.get(`${t.db}@${t.branch}`) !== m) return true;
    if (ref.lineage === lineage) {
      pending = await settleImplicit(b, t, pending);
      return false;
    }
    assert.equal(ref.head_txid, landed.head.txid, `${t.branch} repointed to the expected txid`);
    b.model.set(`${t.db}@${t.branch}`, { head: { ...landed.head }, checkpoints: new Map(landed.checkpoints) });
    return true;
  };
}

/**
 * Both variants checkpoint on a cadence of one, which bounds chains at three members and compacts them back to two,
 * so faults land inside compactions too (a failed one must cost nothing): variant 0 is a layout-2 store, where nearly
 * every checkpoint is followed by a snapshot at the head, variant 1 a layout-3 store, where it is a merged segment.
 */
const checkpointScenario = (variant: 0 | 1): Scenario => {
  let co = '';
  return {
    atomic: true,
    options: { snapshotEvery: 1, layout: variant === 1 ? 3 : 2 },
    async setup(b) {
      co = await seed(b);
    },
    async next(b, k) {
      write(co, k);
      const edits = dump(co);
      const name = `c${k}`;
      const m = model(b, main);
      return {
        // As `offshoot checkpoint` runs: the checkpoint, then the merge of the chain it grew. A failed inline merge is
        // only warned about, and a failed merge after the checkpoint leaves it landed: partial, finished by a
        // fault-free merge.
        run: async (ctx) => {
          const warned: string[] = [];
          await checkpoint({ ...ctx, warn: (w) => warned.push(w) }, main, name);
          try {
            await compactBranch(ctx, main.db, main.branch);
          } catch {
            return false;
          }
          return warned.length === 0;
        },
        async recover(ctx) {
          let { ref } = await ctx.store.getRef(main.db, main.branch);
          if (ref.checkpoints[name] === undefined) {
            await checkpoint(ctx, main, name);
            ({ ref } = await ctx.store.getRef(main.db, main.branch));
          }
          await compactChain(ctx, main.db, ref.lineage, ref.head_txid, ref.epoch);
        },
        async observe() {
          const { ref } = await b.ts.store.getRef('app', 'main');
          const cp = ref.checkpoints[name];
          if (cp === undefined) {
            assert.equal(ref.head_txid, m.head.txid, 'the head moves only with the checkpoint');
            return false;
          }
          if (!m.checkpoints.has(name)) {
            assert.equal(cp.txid, m.head.txid + 1);
            m.head = { txid: cp.txid, dump: edits };
            m.checkpoints.set(name, { ...m.head });
          }
          return true;
        },
      };
    },
  };
};

/** Variant 1 forks from a dirty checkout, so the implicit checkpoint is under fault too. */
const forkScenario = (variant: 0 | 1): Scenario => {
  let co = '';
  return {
    atomic: true,
    async setup(b) {
      co = await seed(b);
    },
    async next(b, k) {
      let pending: string | undefined;
      if (variant === 1) {
        write(co, k);
        pending = dump(co);
      }
      const child = `f${k}`;
      return {
        run: async (ctx) => void (await fork(ctx, main, child)),
        async observe() {
          pending = await settleImplicit(b, main, pending);
          const got = await b.ts.store.tryGetRef('app', child);
          if (got === undefined) return false;
          const head = model(b, main).head;
          assert.equal(got.ref.head_txid, head.txid, 'the fork starts at the source head');
          if (!b.model.has(`app@${child}`)) b.model.set(`app@${child}`, branchAt(head, 'fork'));
          return pending === undefined;
        },
        async done() {
          await destroy(b.ts.ctx, branch(child));
          b.model.delete(`app@${child}`);
        },
      };
    },
  };
};

/**
 * Every run rolls app@work back to the same checkpoint, so the base spine stays two hops deep however many runs a
 * sweep takes. Variant 1 rolls back with --materialize (snapshot copies, read back and re-encoded).
 */
const rollbackScenario = (variant: 0 | 1): Scenario => {
  const work = branch('work');
  let co = '';
  return {
    atomic: true,
    async setup(b) {
      await seed(b);
      await fork(b.ts.ctx, main, 'work');
      b.model.set('app@work', branchAt(model(b, main).head, 'fork'));
      co = (await checkout(b.ts.ctx, work)).path;
      write(co, 0);
      await commit(b, work, 'base', co);
    },
    async next(b, k) {
      // A checkout a failed refresh left behind is brought back to the head first (it holds no edits).
      await checkout(b.ts.ctx, work);
      write(co, k);
      await commit(b, work, `r${k}`, co);
      write(co, k + 1);
      const m = model(b, work);
      const to = m.checkpoints.get('base');
      assert.ok(to);
      const kept = new Map([...m.checkpoints].filter(([, s]) => s.txid <= to.txid));
      return {
        run: async (ctx) => void (await rollback(ctx, work, 'base', { materialize: variant === 1 })),
        observe: await repointObserver(b, work, 'work-pre-rollback', { head: to, checkpoints: kept }, dump(co)),
        done: () => dropKeptAside(b, work, 'work-pre-rollback'),
      };
    },
  };
};

/** Variant 1 promotes with --materialize. */
const promoteScenario = (variant: 0 | 1): Scenario => {
  const cand = branch('cand');
  let mainCo = '';
  let candCo = '';
  return {
    atomic: true,
    async setup(b) {
      mainCo = await seed(b);
      await fork(b.ts.ctx, main, 'cand');
      b.model.set('app@cand', branchAt(model(b, main).head, 'fork'));
      candCo = (await checkout(b.ts.ctx, cand)).path;
    },
    async next(b, k) {
      await checkout(b.ts.ctx, main);
      write(candCo, k);
      const source = await commit(b, cand, `p${k}`, candCo);
      write(mainCo, k);
      return {
        run: async (ctx) => void (await promote(ctx, cand, 'main', { force: true, materialize: variant === 1 })),
        observe: await repointObserver(b, main, 'main-pre-promote', branchAt(source, 'promote'), dump(mainCo)),
        done: () => dropKeptAside(b, main, 'main-pre-promote'),
      };
    },
  };
};

/**
 * Variant 0: each run's garbage is a destroyed fork whose objects an earlier gc tombstoned (this gc deletes them).
 * Variant 1: a fork whose TTL has run out (this gc reaps it).
 */
const gcScenario = (variant: 0 | 1): Scenario => {
  let co = '';
  return {
    atomic: false,
    async setup(b) {
      co = await seed(b);
    },
    async next(b, k) {
      const { ctx, clock, store } = b.ts;
      const child = `g${k}`;
      const reaps = variant === 1;
      await fork(ctx, main, child, reaps ? { ttl: { kind: 'set', ttl: BigInt(HOUR_MS) * 1_000_000n } } : {});
      b.model.set(`app@${child}`, branchAt(model(b, main).head, 'fork'));
      const cco = (await checkout(ctx, branch(child))).path;
      write(cco, k);
      await commit(b, branch(child), 'w', cco);
      const lineage = (await store.getRef('app', child)).ref.lineage;
      write(co, k);
      await commit(b, main, `m${k}`, co);
      if (reaps) {
        clock.advance(2 * HOUR_MS);
      } else {
        await destroy(ctx, branch(child));
        b.model.delete(`app@${child}`);
        await runGc(ctx, { grace: 0n });
      }
      return {
        run: async (c) => (await runGc(c, { grace: 0n })).reapErrors.length === 0,
        async observe() {
          // Collection deletes objects: re-materialize everything from the store from now on.
          b.verifier.forget();
          if (!reaps) return (await store.backend.list(lineagePrefix(lineage))).length === 0;
          if ((await store.tryGetRef('app', child)) !== undefined) return false;
          b.model.delete(`app@${child}`);
          return true;
        },
        async recover(c) {
          // A destroy that failed half-way leaves its claim; gc clears a claim once it is stale, then reaps.
          clock.advance(STALE_CLAIM_MS + 1000);
          await runGc(c, { grace: 0n });
          await runGc(c, { grace: 0n });
        },
      };
    },
  };
};

function assertTyped(err: unknown, fault: Fault, where: string): void {
  assert.ok(
    err instanceof OffshootError,
    `${where}: threw ${err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err)}`,
  );
  assert.ok(surfacedAs(fault).includes(err.code), `${where}: surfaced ${err.code}: ${err.message}`);
  assert.ok(typeof err.hint === 'string' && err.hint !== '', `${where}: ${err.code} has no hint: ${err.message}`);
}

/** One sweep: a fresh store, then call index 0, 1, 2, … of `method` failing in turn until a run goes untouched. */
async function sweep(name: string, scenario: Scenario, method: BackendMethod, offset: number): Promise<number> {
  let fb: FaultBackend | undefined;
  const ts = await openS3TestStore({ ...scenario.options, wrap: (inner) => (fb = faultBackend(inner)) });
  assert.ok(fb);
  const b: Bench = { ts, fb, model: new Map(), verifier: new DumpVerifier(ts), etags: new Map() };
  try {
    await scenario.setup(b);
    await b.verifier.verify(b.model, `${name} set-up`);
    for (let i = 0; ; i++) {
      const { label, fault } = FAULTS[(i + offset) % FAULTS.length] as { label: string; fault: Fault };
      const where = `${name}: ${label} on ${method} call #${i}`;
      assert.ok(i < MAX_CALLS, `${where}: the operation never ran out of ${method} calls`);
      ts.clock.advance(1000);
      const attempt = await scenario.next(b, i);
      const before = b.fb.fired.length;
      b.fb.inject({ method, fault, skip: i, times: 1 });
      let error: unknown;
      let partial = false;
      try {
        partial = (await attempt.run(ts.ctx)) === false;
      } catch (err) {
        error = err;
      } finally {
        b.fb.clear();
      }
      const fired = b.fb.fired.length > before;
      if (error !== undefined) {
        assert.ok(fired, `${where}: failed with no fault injected: ${(error as Error).message}`);
        assertTyped(error, fault, where);
      }
      const landed = await attempt.observe();
      if (error === undefined && !partial)
        assert.ok(landed, `${where}: reported success, but its effect is not all in the store`);
      if (error !== undefined && scenario.atomic)
        assert.equal(landed, false, `${where}: reported ${(error as OffshootError).code}, but its effect landed`);
      await b.verifier.verify(b.model, `${where}, after the fault`);
      if (error !== undefined || partial) {
        await (attempt.recover ?? attempt.run)(ts.ctx);
        assert.ok(await attempt.observe(), `${where}: a fault-free re-run did not finish the operation`);
      }
      await attempt.done?.();
      if (!fired) {
        // The re-runs' results are checked once more, from a cold cache.
        b.verifier.forget();
        await b.verifier.verify(b.model, `${name}: after the ${method} sweep`);
        return i;
      }
    }
  } finally {
    await ts.cleanup();
  }
}

describe('engine operations under injected S3 faults', { concurrency: true }, () => {
  if (s3Unavailable('engine fault injection over S3')) return;
  const scenarios: Array<[string, (variant: 0 | 1) => Scenario]> = [
    ['checkpoint', checkpointScenario],
    ['fork', forkScenario],
    ['rollback', rollbackScenario],
    ['promote', promoteScenario],
    ['gc', gcScenario],
  ];
  for (const [name, make] of scenarios) {
    it(`${name}: every put and read fails in turn, and the store stays whole and recoverable`, async () => {
      const calls: string[] = [];
      for (const method of METHODS) {
        for (const { offset, variant } of SWEEPS)
          calls.push(
            `${method}/${variant}: ${await sweep(`${name} (variant ${variant})`, make(variant), method, offset)}`,
          );
      }
      const faulted = calls.filter((c) => !c.endsWith(': 0')).length;
      assert.ok(faulted >= 4, `${name}: faults fired in only ${faulted} sweeps (${calls.join(', ')})`);
    });
  }
});

describe('a store failure on the write that repoints a branch', () => {
  if (s3Unavailable('repoint write failures over S3')) return;
  it('surfaces as UNAVAILABLE or TIMEOUT, not as a lost race, from rollback, promote and compact', async () => {
    let fb: FaultBackend | undefined;
    const ts = await openS3TestStore({ wrap: (inner) => (fb = faultBackend(inner)) });
    assert.ok(fb);
    const b: Bench = { ts, fb, model: new Map(), verifier: new DumpVerifier(ts), etags: new Map() };
    try {
      const { ctx, store } = ts;
      await seed(b);
      const work = branch('work');
      await fork(ctx, main, 'work');
      const co = (await checkout(ctx, work)).path;
      write(co, 1);
      await checkpoint(ctx, work, 'one');
      const ops: Array<[string, string, () => Promise<unknown>]> = [
        ['rollback', 'work', () => rollback(ctx, work, 'fork')],
        ['promote', 'main', () => promote(ctx, work, 'main', { force: true })],
        ['compact', 'work', () => compact(ctx, work)],
      ];
      for (const [op, target, run] of ops) {
        for (const [fault, code] of [
          [{ status: 503 }, 'UNAVAILABLE'],
          [{ timeout: true }, 'TIMEOUT'],
        ] as Array<[Fault, ErrorCode]>) {
          const before = await store.getRef('app', target);
          b.fb.inject({ method: 'put', key: refKey('app', target), fault, times: 1 });
          const err = await run().then(
            () => undefined,
            (e: unknown) => e,
          );
          b.fb.clear();
          assert.ok(
            hasCode(err, code),
            `${op} with ${code} on the ref write surfaced ${(err as OffshootError | undefined)?.code}: ${(err as Error | undefined)?.message}`,
          );
          assert.equal((await store.getRef('app', target)).etag, before.etag, `${op}: the branch was not repointed`);
        }
        await run();
        assert.notEqual((await store.getRef('app', target)).ref.lineage, undefined);
      }
    } finally {
      await ts.cleanup();
    }
  });
});
