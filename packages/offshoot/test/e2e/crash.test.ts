// Crash safety of the at-rest CLI: ./offshoot is SIGKILLed at random points inside checkpoint, fork, rollback,
// promote and gc on a multi-megabyte database. A model of what is durable is updated from `offshoot status` after
// every kill (did the ref move?), and after every round every branch head and every checkpoint must export to
// exactly the model's `.dump`, every branch must check out, and leftovers of the killed process must not get in the
// way of the next command.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { Prng } from '../ops/prng.js';
import {
  assertCleanError,
  dumpHash,
  ensureBuilt,
  filesUnder,
  finished,
  sql,
  statusMap,
  tempStore,
  type StatusBranch,
  type TempStore,
} from './cli-harness.js';

/** Moves a ref's activity clock an hour back, so its TTL has run out without the test waiting for it to. */
function expireTtl(refFile: string): void {
  const ref = JSON.parse(readFileSync(refFile, 'utf8')) as Record<string, unknown>;
  writeFileSync(refFile, JSON.stringify({ ...ref, touched_at: new Date(Date.now() - 3_600_000).toISOString() }));
}

const ROUNDS = Number(process.env.OFFSHOOT_CRASH_ROUNDS ?? 15);
/** Without an explicit round count, rounds stop once this many seconds have gone (each op still gets killed). */
const BUDGET_S = process.env.OFFSHOOT_CRASH_ROUNDS === undefined ? 110 : Infinity;
const SEED = Number(process.env.OFFSHOOT_CRASH_SEED ?? Date.now() % 2 ** 31);
/** Rows of ~900 bytes: a database of about 5.5 MB, so every operation has real work to be killed in. */
const ROWS = 6000;
/** User forks kept alive at once; older ones are destroyed between rounds so verification stays bounded. */
const MAX_FORKS = 2;
const DB = 'big';
/** The local backend breaks a lock of another host once it is this old. */
const LOCK_STALE_MS = 30_000;

type Op = 'checkpoint' | 'fork' | 'rollback' | 'promote' | 'gc';
const OPS: readonly Op[] = ['checkpoint', 'fork', 'rollback', 'promote', 'gc'];

/** What the model says a branch durably holds: `.dump` hashes of its head and of each checkpoint. */
interface BranchModel {
  head: string;
  checkpoints: Map<string, string>;
  /** Made with a short TTL for gc to reap; such a branch may vanish at any gc. */
  expiring: boolean;
  /** Creation order, for destroying the oldest forks first. */
  born: number;
  /**
   * An undo point no round has named since offshoot kept it: the next undo point of its kind may replace it. Once a
   * round names it (it may have been checkpointed into or rolled back), offshoot refuses to replace it, so the round
   * that needs its slot destroys it first.
   */
  untouchedUndo: boolean;
}

/** Counters reported at the end, so a run shows where its kills landed. */
interface Stats {
  killed: Record<Op, number>;
  completed: Record<Op, number>;
  landed: Record<Op, number>;
  orphanKills: number;
  locksLeft: number;
  claimsAged: number;
}

const MERGED_RE = /^segment-([0-9a-f]{16})-([0-9a-f]{16})\.ltx$/;

const zero = (): Record<Op, number> => ({ checkpoint: 0, fork: 0, rollback: 0, promote: 0, gc: 0 });

/** One crash run: the store, the model of what it durably holds, and the random source that drives both. */
class CrashRun {
  readonly model = new Map<string, BranchModel>();
  /** Merged segments seen in the store after some op: kills then also land in merges, and reads go through them. */
  readonly merged = new Set<string>();
  readonly stats: Stats = {
    killed: zero(),
    completed: zero(),
    landed: zero(),
    orphanKills: 0,
    locksLeft: 0,
    claimsAged: 0,
  };
  /** One line per killing round: what ran, when it was killed, what landed. */
  readonly trace: string[] = [];
  /** Typical uninterrupted duration per op (ms): kills land between about startup and a little past this. */
  readonly estimate: Record<Op, number> = { checkpoint: 1500, fork: 1000, rollback: 1500, promote: 1500, gc: 1000 };
  /** How long the CLI takes to start and exit doing nothing (ms): a kill before this lands in no work at all. */
  startup = 0;
  /** Off while calibrating: the first run of each op completes and measures how long it takes. */
  killing = false;
  // Seeded, so a failing run replays from the seed it prints.
  private readonly rand: Prng;
  private births = 0;
  // .dump is a function of the file's bytes, so a state already dumped once is recognised by a byte hash.
  private readonly dumpOfBytes = new Map<string, string>();
  private exports = 0;
  /** The last op run, as the trace line names it. */
  lastRun = '';
  private dataAfterOp = 0;

  constructor(
    readonly ts: TempStore,
    seed: number,
  ) {
    this.rand = new Prng(seed);
  }

  int(lo: number, hi: number): number {
    return this.rand.int(lo, hi);
  }

  pick<T>(items: readonly T[]): T {
    return this.rand.pick(items);
  }

  chance(p: number): boolean {
    return this.rand.chance(p);
  }

  checkoutOf(branch: string): string {
    return join(this.ts.store, 'checkouts', DB, `${branch}.db`);
  }

  addBranch(
    branch: string,
    head: string,
    checkpoints: Record<string, string>,
    opts: { expiring?: boolean; undo?: boolean } = {},
  ): void {
    this.model.set(branch, {
      head,
      checkpoints: new Map(Object.entries(checkpoints)),
      expiring: opts.expiring ?? false,
      born: this.births++,
      untouchedUndo: opts.undo ?? false,
    });
  }

  /** Marks branches a round names: from now on they may hold data of their own. */
  named(...branches: string[]): void {
    for (const b of branches) {
      const m = this.model.get(b);
      if (m) m.untouchedUndo = false;
    }
  }

  /** Whether `name` is free for an undo point: absent, or an undo point nobody has used. */
  undoSlotFree(name: string): boolean {
    return this.model.get(name)?.untouchedUndo ?? true;
  }

  /** Destroys a used branch sitting in an undo point's slot (offshoot refuses to replace it); true when it did. */
  clearUndoSlot(name: string): boolean {
    if (this.undoSlotFree(name)) return false;
    this.ts.run(['destroy', `${DB}@${name}`, '--force']);
    this.model.delete(name);
    return true;
  }

  /** The `.dump` hash of a database file with no pending -wal. */
  async stateOf(path: string): Promise<string> {
    const wal = `${path}-wal`;
    assert.ok(!existsSync(wal) || statSync(wal).size === 0, `${path} has a pending -wal`);
    const bytes = createHash('sha256').update(readFileSync(path)).digest('hex');
    const known = this.dumpOfBytes.get(bytes);
    if (known !== undefined) return known;
    const h = await dumpHash(path);
    this.dumpOfBytes.set(bytes, h);
    return h;
  }

  /** Writes to a branch's checkout with sqlite3 and returns the content it now holds (not yet durable). */
  async write(branch: string, round: number): Promise<string> {
    const path = this.checkoutOf(branch);
    if (!existsSync(path)) await this.ts.runAsync(['checkout', `${DB}@${branch}`]);
    const oneIn = this.pick([2, 4, 8, 16, 64]);
    sql(
      path,
      `UPDATE big SET v = v + 1, pad = hex(randomblob(450)) WHERE abs(random()) % ${oneIn} = 0;
      INSERT INTO log(note) VALUES ('round ${round} on ${branch}');`,
    );
    return this.stateOf(path);
  }

  /** Exports a target and returns its `.dump` hash; the file is removed afterwards. */
  async exported(target: string): Promise<string> {
    const out = this.ts.path('exports', `${this.exports++}.db`);
    await this.ts.runAsync(['export', target, out]);
    try {
      return await this.stateOf(out);
    } finally {
      rmSync(out, { force: true });
    }
  }

  /** Runs the CLI and SIGKILLs it after a random delay inside its expected run time; true when it was killed. */
  async runKilled(op: Op, args: string[]): Promise<boolean> {
    const floor = Math.min(0.9 * this.startup, 0.8 * this.estimate[op]);
    // A little past the typical end too, so some kills land after the ref moved, in the cleanup that follows.
    const delay = floor + this.rand.next() * (1.25 * this.estimate[op] - floor);
    const started = Date.now();
    const child = this.ts.spawn(args);
    const done = finished(child);
    const timer = this.killing ? setTimeout(() => child.kill('SIGKILL'), delay) : undefined;
    const r = await done;
    clearTimeout(timer);
    const took = Date.now() - started;
    this.lastRun = `${args.join(' ')}: ${r.signal === 'SIGKILL' ? `killed at ${Math.round(delay)} ms` : `completed in ${took} ms`}`;
    if (r.signal === 'SIGKILL') {
      this.stats.killed[op]++;
      return true;
    }
    if (r.signal !== null) assert.fail(`offshoot ${args.join(' ')} ended by ${r.signal}`);
    assert.equal(r.code, 0, `offshoot ${args.join(' ')} (not killed) failed: ${r.stderr}`);
    if (this.killing) {
      this.stats.completed[op]++;
      this.estimate[op] = 0.7 * this.estimate[op] + 0.3 * took;
    } else {
      this.estimate[op] = took;
    }
    return false;
  }

  /**
   * A killed process can leave a `<key>.lock` and `.tmp-*` files (never listed). The locks are left as they are:
   * they name a pid that is gone, so the next writer of the key must break them at once, or time out BUSY.
   */
  countLeftoverLocks(): void {
    this.stats.locksLeft += filesUnder(this.ts.store, (n) => n.endsWith('.lock')).length;
  }

  /** Ages a destroy claim (`deleting_at`) a killed reap left on a ref, as 30 s passing would. */
  ageDeleteClaims(): void {
    for (const rel of filesUnder(join(this.ts.store, 'refs'), (n) => !n.startsWith('.tmp-') && !n.endsWith('.lock'))) {
      const file = join(this.ts.store, 'refs', rel);
      const ref = JSON.parse(readFileSync(file, 'utf8')) as { deleting?: boolean; deleting_at?: string };
      if (!ref.deleting) continue;
      ref.deleting_at = new Date(Date.now() - 3_600_000).toISOString();
      writeFileSync(file, JSON.stringify(ref));
      this.stats.claimsAged++;
    }
  }

  dataFileCount(): number {
    return filesUnder(join(this.ts.store, 'data'), (n) => !n.startsWith('.tmp-')).length;
  }

  /** Notes the merged segments (segment-{max}-{min}.ltx with min < max) now in the store. */
  private noteMerged(): void {
    for (const f of filesUnder(join(this.ts.store, 'data'), (n) => MERGED_RE.test(n))) {
      const m = MERGED_RE.exec(f.slice(f.lastIndexOf('/') + 1)) as RegExpExecArray;
      if (m[1] !== m[2]) this.merged.add(f);
    }
  }

  /** Every branch checks out, and every head and checkpoint exports to exactly what the model says. */
  async verify(label: string): Promise<void> {
    const status = statusMap(this.ts);
    const inStore = [...status.keys()]
      .filter((k) => k.startsWith(`${DB}@`))
      .map((k) => k.slice(DB.length + 1))
      .sort();
    assert.deepEqual(inStore, [...this.model.keys()].sort(), `${label}: the store's branches are the model's`);
    const jobs: Array<() => Promise<void>> = [];
    for (const [branch, m] of this.model) {
      const s = status.get(`${DB}@${branch}`) as StatusBranch;
      assert.deepEqual(
        [...s.checkpoints].sort(),
        [...m.checkpoints.keys()].sort(),
        `${label}: checkpoints of ${branch}`,
      );
      jobs.push(async () => {
        const r = await this.ts.runAsync(['checkout', `${DB}@${branch}`, '--discard']);
        assert.equal(r.stdout, `${this.checkoutOf(branch)}\n`);
        assert.equal(
          await this.stateOf(this.checkoutOf(branch)),
          m.head,
          `${label}: checkout of ${branch} holds its head`,
        );
      });
      jobs.push(async () =>
        assert.equal(await this.exported(`${DB}@${branch}`), m.head, `${label}: head of ${branch}`),
      );
      for (const [cp, want] of m.checkpoints) {
        jobs.push(async () =>
          assert.equal(await this.exported(`${DB}@${branch}@${cp}`), want, `${label}: ${branch}@${cp}`),
        );
      }
    }
    await runLimited(jobs, 4);
  }

  /** Destroys the oldest user forks beyond MAX_FORKS (undo points count as forks too). */
  cap(): void {
    const forks = [...this.model.entries()].filter(([b]) => b !== 'main').sort((a, b) => a[1].born - b[1].born);
    for (const [branch] of forks.slice(0, Math.max(0, forks.length - MAX_FORKS))) {
      this.ts.run(['destroy', `${DB}@${branch}`, '--force']);
      this.model.delete(branch);
    }
  }

  /** One round: prepare, run one op and kill it somewhere, decide from status what landed, verify. */
  async round(n: number, op: Op): Promise<void> {
    const roundStarted = Date.now();
    const branches = [...this.model.keys()].filter((b) => !(this.model.get(b) as BranchModel).expiring);
    let pre = statusMap(this.ts);
    let dataBefore = this.dataFileCount();
    const cleared = (name: string) => {
      if (!this.clearUndoSlot(name)) return;
      pre = statusMap(this.ts);
      dataBefore = this.dataFileCount();
    };
    let landed = false;
    if (op === 'checkpoint') {
      const b = this.pick(branches);
      this.named(b);
      const content = await this.write(b, n);
      const name = `r${n}`;
      await this.runKilled(op, ['checkpoint', `${DB}@${b}`, name]);
      const post = this.observe();
      landed = this.decideCheckpoint(pre, post, b, name, content);
    } else if (op === 'fork') {
      const src = this.pick(branches);
      const srcModel = this.model.get(src) as BranchModel;
      const at = this.chance(0.3) ? this.pick([...srcModel.checkpoints.keys()]) : undefined;
      const content = this.chance(0.5) ? await this.write(src, n) : undefined;
      const child = `f${n}`;
      this.named(src);
      await this.runKilled(op, ['fork', `${DB}@${src}`, child, '--ttl', '1h', ...(at ? ['--at', at] : [])]);
      const post = this.observe();
      landed = this.decideFork(pre, post, src, child, at, content);
    } else if (op === 'rollback') {
      const b = this.pick(branches);
      this.named(b);
      cleared(`${b}-pre-rollback`);
      const to = this.pick([...(this.model.get(b) as BranchModel).checkpoints.keys()]);
      const content = this.chance(0.5) ? await this.write(b, n) : undefined;
      await this.runKilled(op, ['rollback', `${DB}@${b}`, '--to', to]);
      const post = this.observe();
      landed = this.decideRollback(pre, post, b, to, content);
    } else if (op === 'promote') {
      // A used undo point of the target cannot be the source: offshoot would refuse to replace it.
      const sources = (tgt: string) =>
        branches.filter((b) => b !== tgt && (b !== `${tgt}-pre-promote` || this.undoSlotFree(b)));
      // Kills, trims and cleared undo slots can leave main alone: a promote needs a second branch, forked first
      // without a kill.
      if (!branches.some((b) => sources(b).length > 0)) {
        const extra = `p${n}`;
        this.ts.run(['fork', `${DB}@main`, extra, '--ttl', '1h']);
        const head = (this.model.get('main') as BranchModel).head;
        this.addBranch(extra, head, { fork: head });
        branches.push(extra);
        pre = statusMap(this.ts);
        dataBefore = this.dataFileCount();
      }
      const tgt = this.pick(branches.filter((b) => sources(b).length > 0));
      const src = this.pick(sources(tgt));
      cleared(`${tgt}-pre-promote`);
      this.named(src, tgt);
      // The source is left clean when it is the target's undo point, which this promote replaces.
      const srcContent = src !== `${tgt}-pre-promote` && this.chance(0.5) ? await this.write(src, n) : undefined;
      const tgtContent = this.chance(0.3) ? await this.write(tgt, n) : undefined;
      await this.runKilled(op, ['promote', `${DB}@${src}`, '--onto', tgt, '--force']);
      const post = this.observe();
      landed = this.decidePromote(pre, post, src, tgt, srcContent, tgtContent);
    } else {
      landed = await this.gcRound(n);
    }
    if (this.killing) {
      this.trace.push(`${n}: ${this.lastRun}${landed ? ', landed' : ''}`);
      if (landed) this.stats.landed[op]++;
      else if (op !== 'gc' && this.dataAfterOp > dataBefore) this.stats.orphanKills++;
    }
    const verifyStarted = Date.now();
    // Verifying re-materializes every checkout with --discard, dropping edits this round left uncheckpointed (a fork
    // --at of a written source): the model tracks only what a round itself wrote, so no dirty checkout may outlive
    // its round.
    await this.verify(`round ${n} (${op}${landed ? ', landed' : ''})`);
    this.cap();
    if (this.killing)
      this.trace[this.trace.length - 1] +=
        ` [round ${Date.now() - roundStarted} ms, verify ${Date.now() - verifyStarted} ms]`;
  }

  private observe(): Map<string, StatusBranch> {
    this.dataAfterOp = this.dataFileCount();
    this.noteMerged();
    this.countLeftoverLocks();
    return statusMap(this.ts);
  }

  private decideCheckpoint(
    pre: Map<string, StatusBranch>,
    post: Map<string, StatusBranch>,
    b: string,
    name: string,
    content: string,
  ): boolean {
    const before = pre.get(`${DB}@${b}`) as StatusBranch;
    const after = post.get(`${DB}@${b}`);
    assert.ok(after, `checkpoint never removes ${b}`);
    const landed = after.checkpoints.includes(name);
    assert.equal(after.txid, before.txid + (landed ? 1 : 0), 'the head moves exactly when the checkpoint lands');
    if (landed) {
      const m = this.model.get(b) as BranchModel;
      m.head = content;
      m.checkpoints.set(name, content);
    }
    return landed;
  }

  /** The source's head after an implicit checkpoint of its dirty checkout, if that landed. */
  private advanceIfCheckpointed(
    pre: Map<string, StatusBranch>,
    post: Map<string, StatusBranch>,
    b: string,
    content: string | undefined,
  ): boolean {
    const before = pre.get(`${DB}@${b}`) as StatusBranch;
    const after = post.get(`${DB}@${b}`) as StatusBranch;
    if (after.txid !== before.txid + 1 || content === undefined) return false;
    (this.model.get(b) as BranchModel).head = content;
    return true;
  }

  /**
   * An undo point replaced while it held the only copy of its state is kept first as `<name>-<n>`: a branch this op
   * made, holding what the model's `earlier` held.
   */
  private keptAside(
    pre: Map<string, StatusBranch>,
    post: Map<string, StatusBranch>,
    name: string,
    earlier: BranchModel | undefined,
  ): void {
    const aside = new RegExp(`^${DB}@${name}-\\d+$`);
    for (const key of post.keys()) {
      if (!aside.test(key) || pre.has(key)) continue;
      assert.ok(earlier !== undefined, `${key} kept aside an undo point the model did not have`);
      this.addBranch(key.slice(DB.length + 1), earlier.head, Object.fromEntries(earlier.checkpoints));
    }
  }

  /** Whether an undo point `name` was (re)written by this op: it is new, or its activity clock moved. */
  private rewritten(pre: Map<string, StatusBranch>, post: Map<string, StatusBranch>, name: string): boolean {
    const after = post.get(`${DB}@${name}`);
    if (!after) return false;
    const before = pre.get(`${DB}@${name}`);
    return before === undefined || before.touched_at !== after.touched_at;
  }

  private decideFork(
    pre: Map<string, StatusBranch>,
    post: Map<string, StatusBranch>,
    src: string,
    child: string,
    at: string | undefined,
    content: string | undefined,
  ): boolean {
    assert.ok(post.has(`${DB}@${src}`));
    this.advanceIfCheckpointed(pre, post, src, at === undefined ? content : undefined);
    assert.ok((post.get(`${DB}@${src}`) as StatusBranch).txid <= (pre.get(`${DB}@${src}`) as StatusBranch).txid + 1);
    const made = post.get(`${DB}@${child}`);
    if (!made) return false;
    const m = this.model.get(src) as BranchModel;
    const state = at === undefined ? m.head : (m.checkpoints.get(at) as string);
    assert.deepEqual(made.checkpoints, ['fork']);
    this.addBranch(child, state, { fork: state });
    return true;
  }

  private decideRollback(
    pre: Map<string, StatusBranch>,
    post: Map<string, StatusBranch>,
    b: string,
    to: string,
    content: string | undefined,
  ): boolean {
    const before = pre.get(`${DB}@${b}`) as StatusBranch;
    const after = post.get(`${DB}@${b}`) as StatusBranch;
    const m = this.model.get(b) as BranchModel;
    const target = (before.checkpoints_v2.find((c) => c.name === to) as { txid: number }).txid;
    const dirtyOnly = content !== undefined && after.txid === before.txid + 1;
    const rolledBack = !dirtyOnly && after.touched_at !== before.touched_at;
    const headBefore = dirtyOnly || (rolledBack && content !== undefined) ? (content as string) : m.head;
    const backup = `${b}-pre-rollback`;
    if (this.rewritten(pre, post, backup)) {
      this.keptAside(pre, post, backup, this.model.get(backup));
      this.addBranch(backup, headBefore, { fork: headBefore }, { undo: true });
    }
    if (dirtyOnly) m.head = headBefore;
    if (!rolledBack) return false;
    assert.equal(after.txid, target);
    const kept = before.checkpoints_v2.filter((c) => c.txid <= target).map((c) => c.name);
    assert.deepEqual([...after.checkpoints].sort(), [...kept].sort());
    m.head = m.checkpoints.get(to) as string;
    for (const name of [...m.checkpoints.keys()]) if (!kept.includes(name)) m.checkpoints.delete(name);
    return true;
  }

  private decidePromote(
    pre: Map<string, StatusBranch>,
    post: Map<string, StatusBranch>,
    src: string,
    tgt: string,
    srcContent: string | undefined,
    tgtContent: string | undefined,
  ): boolean {
    const backup = `${tgt}-pre-promote`;
    const replaced = this.rewritten(pre, post, backup);
    if (!(src === backup && replaced)) this.advanceIfCheckpointed(pre, post, src, srcContent);
    const source = (this.model.get(src) as BranchModel).head;
    const target = this.model.get(tgt) as BranchModel;
    const before = pre.get(`${DB}@${tgt}`) as StatusBranch;
    const after = post.get(`${DB}@${tgt}`) as StatusBranch;
    const stamp = (s: StatusBranch) => s.checkpoints_v2.find((c) => c.name === 'promote')?.created_at;
    const landed = stamp(after) !== undefined && stamp(after) !== stamp(before);
    // The target's own dirty edits are checkpointed first, into what becomes the undo point.
    if (tgtContent !== undefined && (landed || after.txid === before.txid + 1)) target.head = tgtContent;
    if (replaced) {
      this.keptAside(pre, post, backup, this.model.get(backup));
      this.addBranch(backup, target.head, { fork: target.head }, { undo: true });
    }
    if (!landed) return false;
    assert.deepEqual(after.checkpoints, ['promote']);
    target.head = source;
    target.checkpoints = new Map([['promote', source]]);
    return true;
  }

  /** A branch whose TTL has run out, then gc killed: it may reap it, and must never touch anything else. */
  private async gcRound(n: number): Promise<boolean> {
    const src = this.pick([...this.model.keys()].filter((b) => !(this.model.get(b) as BranchModel).expiring));
    const doomed = `x${n}`;
    await this.ts.runAsync(['fork', `${DB}@${src}`, doomed, '--ttl', '1s']);
    const head = (this.model.get(src) as BranchModel).head;
    this.addBranch(doomed, head, { fork: head }, { expiring: true });
    expireTtl(join(this.ts.store, 'refs', DB, doomed));
    await this.runKilled('gc', ['gc', '--grace', '0s']);
    const post = this.observe();
    let reaped = false;
    for (const [branch, m] of [...this.model]) {
      if (post.has(`${DB}@${branch}`)) continue;
      assert.ok(m.expiring, `gc removed ${branch}, which had not expired`);
      this.model.delete(branch);
      reaped = true;
    }
    await this.settleExpired();
    return reaped;
  }

  /** Every expired branch is gone once gc has run past any claim a killed gc left (aged instead of waited for). */
  async settleExpired(): Promise<void> {
    const expiring = () =>
      [...statusMap(this.ts).keys()].some((k) => this.model.get(k.slice(DB.length + 1))?.expiring === true);
    if (!expiring()) {
      for (const [branch, m] of [...this.model]) if (m.expiring) this.model.delete(branch);
      return;
    }
    this.ts.run(['gc', '--grace', '0s']);
    this.ageDeleteClaims();
    this.ts.run(['gc', '--grace', '0s']);
    this.ts.run(['gc', '--grace', '0s']);
    const post = statusMap(this.ts);
    for (const [branch, m] of [...this.model]) {
      if (!m.expiring) continue;
      assert.equal(post.has(`${DB}@${branch}`), false, `expired ${branch} is still there after gc`);
      this.model.delete(branch);
    }
  }
}

/** Runs async jobs with at most limit in flight; the first failure is thrown after the rest settle. */
async function runLimited(jobs: ReadonlyArray<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++] as () => Promise<void>;
      await job().catch((err: unknown) => errors.push(err));
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  if (errors.length > 0) throw errors[0];
}

let ts: TempStore;

before(() => {
  ensureBuilt();
  ts = tempStore({ init: true });
  // Layout 3 and chains bounded at 2 members: nearly every checkpoint merges, so kills land inside merges too.
  ts.run(['upgrade']);
  ts.env.OFFSHOOT_SNAPSHOT_EVERY = '3';
});

after(() => ts.cleanup());

function makeBigDatabase(path: string): void {
  sql(
    path,
    `PRAGMA journal_mode=WAL;
    CREATE TABLE big(id INTEGER PRIMARY KEY, v INTEGER NOT NULL, pad TEXT NOT NULL);
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${ROWS})
      INSERT INTO big SELECT i, 0, hex(randomblob(450)) FROM c;
    CREATE TABLE log(id INTEGER PRIMARY KEY, note TEXT NOT NULL);`,
  );
}

describe('leftovers of a killed process', () => {
  test('a stale lock is broken by the next command; a fresh one is a clean busy (6)', () => {
    ts.run(['create', 'locks']);
    const lock = join(ts.store, 'refs', 'locks', 'main.lock');
    writeFileSync(lock, 'some-host/1\n');
    const waitedOut = Date.now();
    const fresh = ts.run(['touch', 'locks'], { expectCode: 'any' });
    const freshTook = Date.now() - waitedOut;
    assertCleanError(fresh, 6, /waiting for lock .*main\.lock/);
    assert.match(
      fresh.stderr,
      /remove .*main\.lock \(a lock left by a dead process of this host is broken at once, any other once 30 s old\)/,
    );
    const old = (Date.now() - LOCK_STALE_MS - 5_000) / 1000;
    utimesSync(lock, old, old);
    const started = Date.now();
    assert.match(ts.run(['touch', 'locks']).stdout, /^touched locks@main /);
    // Against the run that waited the lock out: both paid a CLI start-up, however slow a loaded machine makes it.
    const took = Date.now() - started;
    assert.ok(took < freshTook, `the stale lock was broken at once (${took} ms), not waited out (${freshTook} ms)`);
    assert.equal(existsSync(lock), false);
  });

  test('.tmp- files beside objects, refs and checkouts are never read as objects', () => {
    ts.run(['fork', 'locks', 'side']);
    const db = ts.run(['checkout', 'locks@side']).stdout.trim();
    sql(db, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
    ts.run(['checkpoint', 'locks@side', 'one']);
    const lineageDir = join(ts.store, 'data', filesUnder(join(ts.store, 'data'))[0]?.split('/')[0] ?? '');
    writeFileSync(join(lineageDir, '.tmp-deadbeef'), 'half an object');
    writeFileSync(join(ts.store, 'refs', 'locks', '.tmp-0123'), '{"half": ');
    writeFileSync(`${db.replace(/side\.db$/, '')}.tmp-side.db-abc`, 'half a checkout');
    const status = statusMap(ts);
    assert.deepEqual([...status.keys()].filter((k) => k.startsWith('locks@')).sort(), ['locks@main', 'locks@side']);
    ts.run(['gc', '--grace', '0s']);
    ts.run(['gc', '--grace', '0s']);
    const out = ts.path('side.db');
    ts.run(['export', 'locks@side@one', out]);
    assert.equal(sql(out, 'SELECT x FROM t;').trim(), '1');
    assert.equal(ts.run(['checkout', 'locks@side']).stdout, `${db}\n`);
  });
});

describe('claims of a killed gc', () => {
  function setRefFields(branch: string, fields: Record<string, unknown>): void {
    const file = join(ts.store, 'refs', 'claims', branch);
    writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as object), ...fields }));
  }

  test('a reap claim left before the destroy started does not keep an expired branch forever', async () => {
    ts.run(['create', 'claims']);
    ts.run(['fork', 'claims', 'undead', '--ttl', '1s']);
    expireTtl(join(ts.store, 'refs', 'claims', 'undead'));
    // What gc leaves when killed right after its reap claim landed.
    setRefFields('undead', { reaping: true });
    assert.match(ts.run(['gc']).stdout, /^gc: reaped \[claims@undead\]$/m);
    assert.equal(statusMap(ts).has('claims@undead'), false);
  });

  test('a reap killed inside its destroy is finished once the destroy claim goes stale', async () => {
    ts.run(['fork', 'claims', 'half-dead', '--ttl', '1s']);
    expireTtl(join(ts.store, 'refs', 'claims', 'half-dead'));
    setRefFields('half-dead', {
      reaping: true,
      deleting: true,
      deleting_at: new Date(Date.now() - 3_600_000).toISOString(),
    });
    assert.match(ts.run(['gc']).stdout, /^gc: cleared stale delete claim\(s\) \[claims@half-dead\]$/m);
    assert.match(ts.run(['gc']).stdout, /^gc: reaped \[claims@half-dead\]$/m);
    assert.equal(statusMap(ts).has('claims@half-dead'), false);
  });
});

describe('SIGKILL inside checkpoint, fork, rollback, promote and gc', () => {
  test('random kills: what the model says is durable is never lost', {
    timeout: 30 * 60_000,
  }, async (t: TestContext) => {
    const started = Date.now();
    t.diagnostic(`seed ${SEED} (set OFFSHOOT_CRASH_SEED to replay), up to ${ROUNDS} rounds (OFFSHOOT_CRASH_ROUNDS)`);
    const crash = new CrashRun(ts, SEED);
    const src = ts.path('big-source.db');
    makeBigDatabase(src);
    assert.ok(statSync(src).size >= 5 * 1024 * 1024, 'the database is at least 5 MB');
    ts.run(['create', DB, '--from', src]);
    const init = await crash.stateOf(src);
    crash.addBranch('main', init, { init });
    ts.run(['checkout', DB]);
    await crash.verify('created');

    // One uninterrupted run of each op first: it builds some history and measures how long each op takes.
    for (const [n, op] of OPS.entries()) await crash.round(-1 - n, op);
    const idle: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = Date.now();
      await ts.runAsync(['version']);
      idle.push(Date.now() - t0);
    }
    crash.startup = idle.sort((a, b) => a - b)[1] as number;
    crash.killing = true;
    const roundsStarted = Date.now();
    let rounds = 0;
    for (; rounds < ROUNDS; rounds++) {
      if (rounds >= OPS.length && Date.now() - roundsStarted > BUDGET_S * 1000) break;
      try {
        await crash.round(rounds, OPS[rounds % OPS.length] as Op);
      } catch (err) {
        // The rounds so far (and this one's op, when it ran) are what a replay needs besides the seed.
        for (const line of crash.trace) t.diagnostic(line);
        t.diagnostic(`round ${rounds}: ${crash.lastRun}`);
        throw err;
      }
    }

    // A second gc afterwards (the first deletes what earlier runs condemned) still leaves every branch exportable.
    ts.run(['gc', '--grace', '0s']);
    ts.run(['gc', '--grace', '0s']);
    await crash.verify('after the final gc');
    for (const line of crash.trace) t.diagnostic(line);
    const tmpLeft = filesUnder(ts.store, (name) => name.startsWith('.tmp-')).length;
    const staging = join(ts.store, '.scratch', 'tmp');
    const stagingLeft = existsSync(staging) ? readdirSync(staging).length : 0;
    const s = crash.stats;
    t.diagnostic(
      `killed ${JSON.stringify(s.killed)}; completed ${JSON.stringify(s.completed)}; landed ${JSON.stringify(s.landed)}`,
    );
    t.diagnostic(
      `kills that left orphan objects: ${s.orphanKills}; key locks left by kills (broken by the next writer): ${s.locksLeft}; delete claims aged: ${s.claimsAged}; .tmp- files left in the store: ${tmpLeft}; staging dirs left under the store (swept by the next staging op): ${stagingLeft}`,
    );
    t.diagnostic(
      `${rounds} rounds; startup ${crash.startup} ms; estimated op durations (ms): ${JSON.stringify(Object.fromEntries(Object.entries(crash.estimate).map(([k, v]) => [k, Math.round(v)])))}; elapsed ${Math.round((Date.now() - started) / 1000)} s`,
    );
    t.diagnostic(`merged segments written: ${crash.merged.size}`);
    assert.ok(OPS.every((op) => s.killed[op] + s.completed[op] > 0));
  });
});
