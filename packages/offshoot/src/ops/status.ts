import { existsSync, readdirSync } from 'node:fs';
import { fail, hasCode } from '../core/errors.js';
import type { Checkpoint, Ref } from '../core/ref.js';
import type { VersionedRef } from '../store/store.js';
import type { BranchStatus, CheckpointStatus, UnreadableRef } from './helpers/branch/branch-status.js';
import { branchState, type BranchState } from './helpers/branch/branch-state.js';
import { expiryOf, expiryText, remainingUntil } from './helpers/branch/expiry.js';
import type { ReapHold } from './helpers/branch/reap-hold.js';
import { checkoutWork } from './helpers/checkout/checkout-work.js';
import { leaseEndText, readLiveness, type Liveness } from './helpers/branch/lease-liveness.js';
import { undoTag } from './helpers/branch/undo-point-names.js';
import { statusFilter, type StatusFilter, type StatusFilterInput } from './helpers/branch/status-filter.js';
import type { OpsContext } from './helpers/context/context.js';
import { checkoutDir, checkoutFileName, checkoutPath, refIndexPath } from './helpers/context/paths.js';
import { roCacheEntries } from './helpers/checkout/ro-cache-entries.js';
import { type LayoutInfo, layoutInfo } from './helpers/layout/layout-info.js';

export { type LayoutInfo, layoutInfo } from './helpers/layout/layout-info.js';

export { BRANCH_STATES, type StatusFilterInput } from './helpers/branch/status-filter.js';

/** The checkouts-ro usage status reports, against the budget the caller shows it by. */
export interface RoCacheUsage {
  entries: number;
  bytes: number;
  budget: number | undefined;
}

/** Everything status reports besides the branches themselves: what a streamed status ends with. */
export interface StatusTail {
  /** Refs that are malformed; empty when every ref reads. */
  unreadable: UnreadableRef[];
  roCache: RoCacheUsage;
  /** The store's layout, what it allows, and what upgrading buys. */
  layout: LayoutInfo;
  /** Under a limit only: whether branches matched beyond it. */
  truncated?: boolean;
  /** Under a limit only: how many matching branches were left out. */
  more?: number;
}

/** The whole-store status report. */
export interface StatusReport extends StatusTail {
  branches: BranchStatus[];
}

/** What status is asked for: the filters, and the budget the ro-cache usage is shown against. */
export type StatusOptions = StatusFilterInput & {
  roCacheBudget?: number;
  /** The state the caller reports for a branch in place of its at-rest state (a daemon's error and pending); the state filter applies to it. */
  stateOf?: (db: string, branch: string, atRest: BranchState) => BranchState;
};

// Refs are read this many at a time, in one batched read (the next batch read while this one is reported): enough to
// amortize a batch, few enough that a streamed status of any store holds little.
const READ_BATCH = 256;

// The names in a directory, or none when it does not exist.
function namesIn(dir: string): Set<string> {
  try {
    return new Set(readdirSync(dir));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return new Set();
    throw err;
  }
}

/**
 * Whether a branch's checkout exists, by one listing of each database's checkout directory rather than a stat per
 * branch; the path of one that does.
 */
function checkoutPresence(root: string): (db: string, branch: string) => string | undefined {
  const listed = new Map<string, Set<string>>();
  return (db, branch) => {
    let names = listed.get(db);
    if (names === undefined) listed.set(db, (names = namesIn(checkoutDir(root, db))));
    if (!names.has(checkoutFileName(branch))) return undefined;
    // Listed is not yet there: a name may be a dangling link, which existsSync (as before) calls absent.
    const path = checkoutPath(root, db, branch);
    return existsSync(path) ? path : undefined;
  };
}

/**
 * Why the reap of a branch whose TTL ran out waits, as the reaper decides it from the checkout's files: read only for an
 * expired branch with a checkout. (A connection holding a clean checkout open is seen by the reaper alone.)
 */
async function reapPostponed(r: Ref, path: string | undefined, now: Date, liveness: Liveness) {
  if (path === undefined) return undefined;
  const expiry = expiryOf(r, liveness);
  if (expiry === undefined || expiry > now.getTime()) return undefined;
  return (await checkoutWork(path))?.reason;
}

function branchStatus(
  db: string,
  branch: string,
  r: Ref,
  state: BranchStatus['state'],
  checkedOut: boolean,
  now: Date,
  liveness: Liveness,
  postponed: ReapHold | undefined,
  ephemeral: boolean,
) {
  const cps: CheckpointStatus[] = [];
  for (const name of Object.keys(r.checkpoints)) {
    const c = r.checkpoints[name] as Checkpoint;
    cps.push({ name, txid: c.txid, createdAt: c.created_at, meta: c.meta });
  }
  if (cps.length > 1) cps.sort((a, b) => a.txid - b.txid || a.name.localeCompare(b.name));
  const expiry = expiryOf(r, liveness);
  const undo = undoTag(r.meta);
  const out: BranchStatus = {
    db,
    branch,
    state,
    storage: r.base ? 'shared' : 'materialized',
    txid: r.head_txid,
    checkpoints: cps.map((c) => c.name),
    checkpointsV2: cps,
    protected: r.protected ?? false,
    checkedOut,
    ttl: r.ttl,
    remaining: expiry === undefined ? undefined : remainingUntil(expiry, now),
    ...(expiry !== undefined ? { expiresAt: expiryText(expiry) } : {}),
    ...(postponed !== undefined ? { reapPostponed: postponed } : {}),
    leaseHolder: r.lease_holder,
    leaseExpiry: leaseEndText(r, liveness),
    touchedAt: r.touched_at,
    parent: r.parent,
    meta: r.meta,
    ...(undo !== undefined ? { undo } : {}),
    ...(ephemeral ? { ephemeral: true } : {}),
  };
  return out;
}

/** A listed ref and its stored text; undefined when it was gone by the time it was read. */
interface ListedRef {
  db: string;
  branch: string;
  text: string | undefined;
}

// The refs to report, in batches. Named databases: each one's refs whole, in one listing of refs/<db>/ (so a
// database's status never lists another's), from its ref index while that is current. A named database with no refs
// is not found, before anything is reported. The whole store: where databases keep ref indexes, each database so, in
// listing order; elsewhere one listing of refs/, read READ_BATCH refs at a time, the next batch read while this one
// is reported.
async function* refBatches(ctx: OpsContext, f: StatusFilter): AsyncGenerator<ListedRef[]> {
  if (f.dbs !== undefined) {
    const all: ListedRef[][] = [];
    for (const db of f.dbs) {
      const refs = await ctx.store.branchRefTexts(db, refIndexPath(ctx.checkoutRoot, db));
      if (refs.length === 0)
        throw fail('NOT_FOUND', `no database ${db}`, {
          hint: `run 'offshoot status' to list databases, or 'offshoot create ${db}'`,
        });
      all.push(refs.map(({ branch, text }) => ({ db, branch, text })));
    }
    yield* all;
    return;
  }
  // Where databases keep ref indexes, the store is read one database at a time, in listing order.
  const dbs = await ctx.store.indexedDbs();
  if (dbs !== undefined) {
    for (const db of dbs) {
      const refs = await ctx.store.branchRefTexts(db, refIndexPath(ctx.checkoutRoot, db));
      if (refs.length > 0) yield refs.map(({ branch, text }) => ({ db, branch, text }));
    }
    return;
  }
  const pairs = await ctx.store.listAllBranches();
  const readBatch = (from: number) => {
    const batch = pairs.slice(from, from + READ_BATCH);
    return { batch, read: ctx.store.refTexts(batch) };
  };
  // A batch read started unawaited (the consumer stopped early, or failed) is not left unhandled.
  let next = pairs.length > 0 ? readBatch(0) : undefined;
  for (let from = 0; next !== undefined; from += READ_BATCH) {
    const { batch, read } = next;
    next = from + READ_BATCH < pairs.length ? readBatch(from + READ_BATCH) : undefined;
    next?.read.catch(() => undefined);
    const texts = await read;
    yield batch.map(({ db, branch }, i) => ({ db, branch, text: texts[i] }));
  }
}

/**
 * `offshoot status`, streamed: reads each listed ref once (or a named database's ref index, while it is current), in
 * listing order and in batches, and hands every branch
 * that matches the filter to `onBranch` as it is read, with the ref it was read from (nothing is kept but the batch),
 * then returns the rest of the report. Past the limit a matching branch is only counted; without a state filter its state is not even computed.
 */
export async function scanStatus(
  ctx: OpsContext,
  opts: StatusOptions,
  onBranch: (b: BranchStatus, ref: Ref) => void | Promise<void>,
): Promise<StatusTail> {
  const f = statusFilter(opts);
  const now = ctx.now();
  let reported = 0;
  let more = 0;
  const unreadable: UnreadableRef[] = [];
  const present = checkoutPresence(ctx.checkoutRoot);
  // Each daemon's liveness object is read once a scan, however many of its sessions are listed.
  const seen = new Map<string, number>();
  for await (const batch of refBatches(ctx, f)) {
    for (const { db, branch, text } of batch) {
      if (text === undefined) continue;
      let ref: Ref;
      try {
        ref = ctx.store.parseBranchRef(db, branch, text);
      } catch (err) {
        if (!hasCode(err, 'CORRUPT')) throw err;
        unreadable.push({ db, branch, code: err.code, error: err.message, hint: err.hint });
        continue;
      }
      // Past the limit a branch is only counted; without a state filter its state is not even computed.
      if (f.limit !== undefined && reported >= f.limit && f.states === undefined) {
        more++;
        continue;
      }
      const path = present(db, branch);
      const checkedOut = path !== undefined;
      // Most refs have no lease and no checkout: idle, known without a read or a turn of the event loop.
      const liveness = !ref.lease_holder ? seen : await readLiveness(ctx, [ref], seen);
      const atRest =
        path !== undefined || ref.lease_holder
          ? await branchState(ref, path ?? checkoutPath(ctx.checkoutRoot, db, branch), now, liveness, checkedOut)
          : 'idle';
      const state = opts.stateOf === undefined ? atRest : opts.stateOf(db, branch, atRest);
      if (f.states !== undefined && !f.states.has(state)) continue;
      if (f.limit !== undefined && reported >= f.limit) {
        more++;
        continue;
      }
      reported++;
      const postponed = await reapPostponed(ref, path, now, liveness);
      const ephemeral = ctx.ephemeral?.holds(db, branch) === true;
      const printing = onBranch(
        branchStatus(db, branch, ref, state, checkedOut, now, liveness, postponed, ephemeral),
        ref,
      );
      if (printing !== undefined) await printing;
    }
  }
  const entries = await roCacheEntries(ctx.checkoutRoot);
  return {
    unreadable,
    roCache: {
      entries: entries.length,
      bytes: entries.reduce((a, e) => a + e.bytes, 0),
      budget: opts.roCacheBudget || undefined,
    },
    layout: layoutInfo(ctx.store.layoutVersion),
    ...(f.limit === undefined ? {} : { truncated: more > 0, more }),
  };
}

/** One branch's status and the ref it was read from. */
export interface BranchView {
  status: BranchStatus;
  got: VersionedRef;
}

/**
 * One branch's status from one read of its ref (the same view `status` reports for it), with the ref itself for a
 * caller that shows more of it; undefined when the branch does not exist. What a one-branch view reads, instead of
 * every ref of the database.
 */
export async function branchView(
  ctx: OpsContext,
  db: string,
  branch: string,
  stateOf?: StatusOptions['stateOf'],
): Promise<BranchView | undefined> {
  const got = await ctx.store.tryGetRef(db, branch);
  if (got === undefined) return undefined;
  const now = ctx.now();
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  const checkedOut = existsSync(path);
  const liveness = await readLiveness(ctx, [got.ref]);
  const atRest = await branchState(got.ref, path, now, liveness, checkedOut);
  const state = stateOf === undefined ? atRest : stateOf(db, branch, atRest);
  const postponed = await reapPostponed(got.ref, checkedOut ? path : undefined, now, liveness);
  const ephemeral = ctx.ephemeral?.holds(db, branch) === true;
  return {
    status: branchStatus(db, branch, got.ref, state, checkedOut, now, liveness, postponed, ephemeral),
    got,
  };
}

/** `offshoot status`: every matching branch's state, storage class, head, checkpoints, protection and TTL — no database reads. */
export async function status(ctx: OpsContext, opts: StatusOptions = {}): Promise<StatusReport> {
  const branches: BranchStatus[] = [];
  const tail = await scanStatus(ctx, opts, (b) => {
    branches.push(b);
  });
  return { branches, ...tail };
}
