// Drives a store through a seeded random history of every at-rest verb, applying each step to the engine and to the
// model (store-model.ts) side by side. Writes go through the stock sqlite3 CLI on the real checkout and on the
// model's private copy; the model learns txids from the engine but checks each against what the step allows.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { checkoutPath } from '../../src/ops/helpers/context/paths.js';
import { promote } from '../../src/ops/promote.js';
import { rollback } from '../../src/ops/rollback.js';
import { touch } from '../../src/ops/touch.js';
import { rejectsCode, type TestStore } from './harness.js';
import { Prng } from './prng.js';
import { dump, restoreDump, runSql } from './sqlite-cli.js';
import { randomWrite } from './sql-workload.js';
import { safetyName, StoreModel, undoSlotFree, type BranchModel } from './store-model.js';

const HOUR_NS = 3_600_000_000_000n;
const HOUR_MS = 3_600_000;
/** Past every TTL the history hands out (forks 1–2h, safety forks 24h), so a GC after it reaps all of them. */
const TIME_JUMP_MS = 48 * HOUR_MS;
/** Above this many branches, destroys become likely so the store stays a size every step can verify. */
const BRANCH_CAP = 12;

/** The verbs a history step can take. */
export type StepKind =
  | 'create'
  | 'checkout'
  | 'write'
  | 'checkpoint'
  | 'forkHead'
  | 'forkAt'
  | 'rollback'
  | 'promote'
  | 'compact'
  | 'destroy'
  | 'gc'
  | 'touch';

/** A seeded random history over one test store, with its model. */
export class RandomHistory {
  readonly rng: Prng;
  readonly model: StoreModel;
  /** One line per step taken, for failure messages. */
  readonly log: string[] = [];
  private counter = 0;
  private lastWritten: string | undefined;

  constructor(
    private readonly ts: TestStore,
    seed: number,
    emptyDump: string,
  ) {
    this.rng = new Prng(seed);
    this.model = new StoreModel(emptyDump, (name) => ts.tmpPath(name));
  }

  /** Takes one random step (time moves a second per step) and says which kind it was. */
  async step(): Promise<StepKind> {
    this.ts.clock.advance(1000);
    const kind = this.chooseKind();
    this.log.push(`${kind}…`);
    this.log[this.log.length - 1] = await this.run(kind);
    return kind;
  }

  private chooseKind(): StepKind {
    const branches = this.model.list();
    if (branches.length === 0) return 'create';
    const crowded = branches.length > BRANCH_CAP;
    return this.rng.weighted<StepKind>({
      create: new Set(branches.map((b) => b.db)).size < 2 ? 0.5 : 0.05,
      checkout: 1.5,
      write: 7,
      checkpoint: 4,
      forkHead: crowded ? 0.2 : 1.2,
      forkAt: crowded ? 0.2 : 0.8,
      rollback: 0.8,
      promote: 0.6,
      compact: 0.6,
      destroy: crowded ? 6 : 0.8,
      gc: 0.5,
      touch: 0.3,
    });
  }

  private pickBranch(filter: (b: BranchModel) => boolean = () => true): BranchModel | undefined {
    const all = this.model.list().filter(filter);
    return all.length === 0 ? undefined : this.rng.pick(all);
  }

  /** Half the time, a branch being worked on (dirty, else the last one written), so histories grow deep, not just wide. */
  private pickWorked(filter: (b: BranchModel) => boolean = () => true): BranchModel | undefined {
    if (this.rng.chance(0.5)) {
      const dirty = this.pickBranch((b) => filter(b) && b.checkout?.dirty === true);
      const last = this.lastWritten !== undefined ? this.model.branches.get(this.lastWritten) : undefined;
      if (last && filter(last) && (dirty === undefined || this.rng.chance(0.5))) return last;
      if (dirty) return dirty;
    }
    return this.pickBranch(filter);
  }

  private async run(kind: StepKind): Promise<string> {
    const any = this.pickBranch();
    if (kind === 'create' || any === undefined) return this.create();
    const worked = this.pickWorked() ?? any;
    const withCheckout = this.pickWorked((b) => b.checkout !== undefined);
    switch (kind) {
      case 'checkout':
        return this.checkout(any);
      case 'write':
        return withCheckout ? this.write(withCheckout) : this.checkout(worked);
      case 'checkpoint':
        return withCheckout ? this.checkpoint(withCheckout) : this.checkout(worked);
      case 'forkHead':
        return this.fork(worked, undefined);
      case 'forkAt':
        return this.fork(worked, this.rng.pick([...worked.checkpoints.keys()]));
      case 'rollback':
        return this.rollback(worked, this.rng.pick([...worked.checkpoints.keys()]));
      case 'promote': {
        const onto = this.pickBranch((b) => b.db === worked.db && b.branch !== worked.branch);
        return onto ? this.promote(worked, onto) : this.checkout(worked);
      }
      case 'compact':
        return this.compact(worked);
      case 'destroy':
        return this.destroy(this.pickBranch((b) => b.branch !== 'main') ?? any);
      case 'gc':
        return this.gc();
      case 'touch':
        return this.touch(any);
    }
  }

  private co(b: BranchModel): string {
    return checkoutPath(this.ts.ctx.checkoutRoot, b.db, b.branch);
  }

  /** The model side of a refresh after a repoint, checked against the re-materialized checkout. */
  private refreshed(b: BranchModel): void {
    if (!b.checkout) return;
    this.model.materialize(b);
    assert.equal(dump(this.co(b)), b.head, `the refreshed checkout of ${b.db}@${b.branch} must hold its new head`);
  }

  /** What an implicit checkpoint of b's checkout will make its head, if it has uncheckpointed edits to capture. */
  private pending(b: BranchModel): string | undefined {
    const c = b.checkout;
    return c?.dirty && !c.stale ? dump(c.file) : undefined;
  }

  /** Applies an implicit checkpoint that landed at txid, checking it against the head it replaced. */
  private settle(b: BranchModel, pending: string | undefined, txid: number, what: string): void {
    if (pending === undefined) {
      assert.equal(txid, b.headTxid, `${what}: a clean checkout must not move ${b.db}@${b.branch}'s head`);
      return;
    }
    assert.ok(
      txid === b.headTxid || txid === b.headTxid + 1,
      `${what}: implicit checkpoint at txid ${txid}, head was ${b.headTxid}`,
    );
    if (pending !== b.head) assert.equal(txid, b.headTxid + 1, `${what}: changed content must land at head+1`);
    b.head = pending;
    b.headTxid = txid;
    if (b.checkout) b.checkout.dirty = false;
  }

  /**
   * The undo point a rollback or promote replaced at `slot`: kept aside at `kept` (the engine found no other branch
   * holding its state), else replaced, and then its state must still be some branch's head or checkpoint.
   */
  private keptAside(db: string, slot: string, old: BranchModel | undefined, kept: string | undefined): void {
    if (kept !== undefined) {
      assert.ok(old, `${db}@${slot}: an earlier undo point was kept aside where there was none`);
      assert.match(kept, /-pre-(rollback|promote)-[0-9]+$/);
      const { checkout: _, ...rest } = old;
      this.model.put({ ...rest, branch: kept, checkpoints: new Map(old.checkpoints) });
      return;
    }
    if (old === undefined) return;
    const held = [...this.model.branches.values()].some(
      (b) => b.head === old.head || [...b.checkpoints.values()].some((c) => c.dump === old.head),
    );
    assert.ok(held, `${db}@${slot} was replaced while it held the only copy of its state`);
  }

  private async safety(db: string, name: string, from: BranchModel): Promise<void> {
    const { ref } = await this.ts.store.getRef(db, name);
    assert.equal(ref.head_txid, from.headTxid, `${db}@${name} must hold the old head`);
    this.model.put({
      db,
      branch: name,
      undoOf: from.branch,
      headTxid: from.headTxid,
      head: from.head,
      checkpoints: new Map([['fork', { txid: from.headTxid, dump: from.head }]]),
      ttl: true,
      protected: false,
    });
  }

  /** A new database: empty, or (sometimes) imported from a file holding another branch's head. */
  private async create(): Promise<string> {
    const db = `d${this.counter++}`;
    const source = this.rng.chance(0.3) ? this.pickBranch() : undefined;
    let from: string | undefined;
    if (source) {
      from = this.ts.tmpPath('import.db');
      restoreDump(from, source.head);
      // sqlite3 leaves an empty database as a zero-byte file, which an import refuses as truncated; VACUUM writes
      // the header any database SQLite has written carries.
      if (statSync(from).size === 0) runSql(from, 'VACUUM;');
    }
    const r = await create(this.ts.ctx, db, from !== undefined ? { from } : {});
    assert.equal(r.txid, 1);
    const head = source?.head ?? this.model.emptyDump;
    this.model.put({
      db,
      branch: 'main',
      headTxid: 1,
      head,
      checkpoints: new Map([['init', { txid: 1, dump: head }]]),
      ttl: false,
      protected: true,
    });
    if (from !== undefined) assert.equal(dump(from), head, 'an import leaves its source untouched');
    return `create ${db}${source ? ` --from ${source.db}@${source.branch}` : ''}`;
  }

  private async checkout(b: BranchModel): Promise<string> {
    const before = b.checkout;
    const r = await checkout(this.ts.ctx, { db: b.db, branch: b.branch });
    assert.equal(r.txid, b.headTxid);
    if (before?.dirty && !before.stale) {
      // A current checkout with uncheckpointed writes is a checkout: kept as it is, and said to be dirty (unless the
      // writes changed nothing, an UPDATE matching no row: a file left as it was is rightly clean).
      const kept = dump(before.file);
      assert.ok(
        r.reused && (r.dirty || kept === b.head),
        `the dirty checkout of ${b.db}@${b.branch} must be kept and reported dirty`,
      );
      assert.equal(dump(r.path), kept, `checkout of ${b.db}@${b.branch} must keep its writes`);
      return `checkout ${b.db}@${b.branch} (dirty, kept)`;
    }
    if (before && !before.dirty && !before.stale)
      assert.ok(r.reused, `a clean, current checkout of ${b.db}@${b.branch} must be reused`);
    else this.model.materialize(b);
    assert.equal(dump(r.path), b.head, `checkout of ${b.db}@${b.branch} must hold its head`);
    return `checkout ${b.db}@${b.branch}${r.reused ? ' (reused)' : ''}`;
  }

  private write(b: BranchModel): string {
    const c = b.checkout;
    assert.ok(c);
    const sql = randomWrite(this.rng, c.file);
    runSql(this.co(b), sql);
    runSql(c.file, sql);
    c.dirty = true;
    this.lastWritten = `${b.db}@${b.branch}`;
    return `write ${b.db}@${b.branch}: ${sql.replaceAll('\n', ' ').slice(0, 120)}`;
  }

  private async checkpoint(b: BranchModel): Promise<string> {
    const c = b.checkout;
    assert.ok(c);
    const name = `k${this.counter++}`;
    const working = c.dirty || c.stale ? dump(c.file) : b.head;
    const r = await checkpoint(this.ts.ctx, { db: b.db, branch: b.branch }, name);
    if (c.stale) assert.equal(r.txid, b.headTxid + 1, 'a stale checkout is checkpointed as a new head');
    else if (!c.dirty) assert.equal(r.kind, 'none', 'checkpointing a clean checkout writes nothing');
    else if (working !== b.head) assert.equal(r.txid, b.headTxid + 1, 'changed content must land at head+1');
    assert.equal(r.kind === 'none', r.txid === b.headTxid);
    b.head = working;
    b.headTxid = r.txid;
    b.checkpoints.set(name, { txid: r.txid, dump: working });
    c.dirty = false;
    c.stale = false;
    return `checkpoint ${b.db}@${b.branch} ${name} -> ${r.kind} txid ${r.txid}`;
  }

  private async fork(src: BranchModel, at: string | undefined): Promise<string> {
    const child = `b${this.counter++}`;
    const ttl = this.rng.chance(0.4);
    const pending = at === undefined ? this.pending(src) : undefined;
    const r = await fork(this.ts.ctx, { db: src.db, branch: src.branch }, child, {
      ...(at !== undefined ? { at } : {}),
      ...(ttl ? { ttl: { kind: 'set' as const, ttl: BigInt(this.rng.int(1, 2)) * HOUR_NS } } : {}),
    });
    let state: { txid: number; dump: string };
    if (at !== undefined) {
      const cp = src.checkpoints.get(at);
      assert.ok(cp);
      state = cp;
    } else {
      this.settle(src, pending, r.txid, `fork of ${src.db}@${src.branch}`);
      state = { txid: src.headTxid, dump: src.head };
    }
    assert.equal(r.txid, state.txid);
    this.model.put({
      db: src.db,
      branch: child,
      headTxid: state.txid,
      head: state.dump,
      checkpoints: new Map([['fork', { ...state }]]),
      ttl,
      protected: false,
    });
    return `fork ${src.db}@${src.branch}${at !== undefined ? `@${at}` : ''} -> ${child} (${r.mode}, txid ${r.txid}${ttl ? ', ttl' : ''})`;
  }

  private async rollback(b: BranchModel, to: string): Promise<string> {
    const cp = b.checkpoints.get(to);
    assert.ok(cp);
    const pending = this.pending(b);
    const hadCheckout = b.checkout !== undefined;
    const materialize = this.rng.chance(0.2);
    if (!undoSlotFree(this.model, b.db, safetyName(b.branch, 'pre-rollback'), b.branch)) {
      await rejectsCode(rollback(this.ts.ctx, { db: b.db, branch: b.branch }, to, { materialize }), 'ALREADY_EXISTS');
      return `rollback ${b.db}@${b.branch} --to ${to} refused: its undo point was used`;
    }
    const earlier = this.model.branches.get(`${b.db}@${safetyName(b.branch, 'pre-rollback')}`);
    const r = await rollback(this.ts.ctx, { db: b.db, branch: b.branch }, to, { materialize });
    if (materialize) assert.equal(r.mode, 'materialized');
    this.settle(b, pending, r.abandoned ? r.abandoned.to : r.txid, `rollback of ${b.db}@${b.branch}`);
    assert.equal(r.txid, cp.txid);
    assert.equal(r.backup, safetyName(b.branch, 'pre-rollback'));
    assert.equal(r.refreshed, hadCheckout);
    await this.safety(b.db, r.backup, b);
    b.head = cp.dump;
    b.headTxid = cp.txid;
    b.checkpoints = new Map([...b.checkpoints].filter(([, c]) => c.txid <= cp.txid));
    this.refreshed(b);
    this.keptAside(b.db, r.backup, earlier, r.earlierBackup);
    return `rollback ${b.db}@${b.branch} --to ${to} (txid ${cp.txid}, ${r.mode})`;
  }

  private async promote(src: BranchModel, onto: BranchModel): Promise<string> {
    const pendingSrc = this.pending(src);
    const pendingTgt = this.pending(onto);
    const hadCheckout = onto.checkout !== undefined;
    const materialize = this.rng.chance(0.2);
    if (!undoSlotFree(this.model, onto.db, safetyName(onto.branch, 'pre-promote'), onto.branch)) {
      const refused = promote(this.ts.ctx, { db: src.db, branch: src.branch }, onto.branch, {
        force: true,
        materialize,
      });
      await rejectsCode(refused, 'ALREADY_EXISTS');
      return `promote ${src.db}@${src.branch} --onto ${onto.branch} refused: its undo point was used`;
    }
    const earlier = this.model.branches.get(`${onto.db}@${safetyName(onto.branch, 'pre-promote')}`);
    const r = await promote(this.ts.ctx, { db: src.db, branch: src.branch }, onto.branch, { force: true, materialize });
    if (materialize) assert.equal(r.mode, 'materialized');
    this.settle(src, pendingSrc, r.txid, `promote from ${src.db}@${src.branch}`);
    const source = { txid: src.headTxid, dump: src.head };
    assert.equal(r.backup, safetyName(onto.branch, 'pre-promote'));
    if (pendingTgt !== undefined) {
      const { ref } = await this.ts.store.getRef(onto.db, r.backup);
      this.settle(onto, pendingTgt, ref.head_txid, `promote onto ${onto.db}@${onto.branch}`);
    }
    await this.safety(onto.db, r.backup, onto);
    const target = this.model.get(onto.db, onto.branch);
    target.head = source.dump;
    target.headTxid = source.txid;
    target.checkpoints = new Map([['promote', { ...source }]]);
    assert.equal(r.refreshed, hadCheckout);
    this.refreshed(target);
    this.keptAside(onto.db, r.backup, earlier, r.earlierBackup);
    return `promote ${src.db}@${src.branch} --onto ${onto.branch} (txid ${r.txid}, ${r.mode})`;
  }

  private async compact(b: BranchModel): Promise<string> {
    const pending = this.pending(b);
    const shared = (await this.ts.store.getRef(b.db, b.branch)).ref.base !== undefined;
    const r = await compact(this.ts.ctx, { db: b.db, branch: b.branch });
    this.settle(b, pending, r.txid, `compact of ${b.db}@${b.branch}`);
    assert.equal(r.compacted, shared, 'compact rewrites exactly the branches that read through a base');
    if (r.compacted) {
      b.checkpoints.set('compact', { txid: b.headTxid, dump: b.head });
      this.refreshed(b);
    }
    return `compact ${b.db}@${b.branch} (${r.compacted ? `${r.snapshots} snapshots` : 'no-op'})`;
  }

  private async destroy(b: BranchModel): Promise<string> {
    const force = b.protected || this.rng.chance(0.3);
    const r = await destroy(this.ts.ctx, { db: b.db, branch: b.branch }, { force });
    assert.equal(r.removedCheckout, b.checkout !== undefined);
    this.model.remove(b.db, b.branch);
    return `destroy ${b.db}@${b.branch}${force ? ' --force' : ''}`;
  }

  private async gc(): Promise<string> {
    const jump = this.rng.chance(0.3);
    let expected: string[] = [];
    let held: string[] = [];
    if (jump) {
      this.ts.clock.advance(TIME_JUMP_MS);
      const expired = this.model.list().filter((b) => b.ttl && !b.protected);
      // Writes to a checkout are activity: an expired branch whose checkout holds uncheckpointed ones stays.
      const name = (b: BranchModel) => `${b.db}@${b.branch}`;
      expected = expired.filter((b) => b.checkout?.dirty !== true).map(name);
      held = expired.filter((b) => b.checkout?.dirty === true).map(name);
    }
    const first = await runGc(this.ts.ctx, { grace: 0n });
    assert.deepEqual(first.reapErrors, []);
    assert.deepEqual([...first.reaped].sort(), expected.sort(), 'gc reaps exactly the expired branches');
    assert.deepEqual(
      first.postponed.map((p) => `${p.name} ${p.reason}`).sort(),
      held.map((n) => `${n} uncheckpointed_writes`).sort(),
      'gc postpones exactly the expired branches whose checkout holds uncheckpointed writes',
    );
    for (const name of expected) {
      const [db, branch] = name.split('@') as [string, string];
      this.model.remove(db, branch);
    }
    const second = await runGc(this.ts.ctx, { grace: 0n });
    assert.deepEqual(second.reaped, []);
    return `gc${jump ? ' after 48h' : ''}: reaped ${first.reaped.length}, tombstoned ${first.tombstoned}, deleted ${second.deleted}`;
  }

  private async touch(b: BranchModel): Promise<string> {
    const choice = this.rng.pick(['keep', 'none', 'set'] as const);
    const r = await touch(
      this.ts.ctx,
      { db: b.db, branch: b.branch },
      choice === 'set' ? { kind: 'set', ttl: 2n * HOUR_NS } : { kind: choice },
    );
    if (choice === 'none') b.ttl = false;
    if (choice === 'set') b.ttl = true;
    assert.equal(r.ttl !== undefined, b.ttl);
    return `touch ${b.db}@${b.branch} ttl=${choice}`;
  }
}
