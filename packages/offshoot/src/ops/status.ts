import { existsSync } from 'node:fs';
import { fail, hasCode } from '../core/errors.js';
import type { Ref } from '../core/ref.js';
import type { BranchStatus, UnreadableRef } from './helpers/branch/branch-status.js';
import { branchState, type BranchState } from './helpers/branch/branch-state.js';
import { expiryOf, expiryText, remainingUntil } from './helpers/branch/expiry.js';
import { leaseEndText, readLiveness, type Liveness } from './helpers/branch/lease-liveness.js';
import { statusFilter, type StatusFilter, type StatusFilterInput } from './helpers/branch/status-filter.js';
import type { OpsContext } from './helpers/context/context.js';
import { checkoutPath } from './helpers/context/paths.js';
import { roCacheEntries } from './helpers/checkout/ro-cache.js';

export type { BranchStatus, CheckpointStatus, UnreadableRef } from './helpers/branch/branch-status.js';
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

// Refs are read this many at a time (a ref read on S3 is a round trip) and still reported in listing order.
const READ_AHEAD = 16;

type RefRead =
  | { kind: 'branch'; status: BranchStatus }
  | { kind: 'counted'; state: undefined }
  | { kind: 'unreadable'; ref: UnreadableRef }
  | { kind: 'gone' }
  | { kind: 'failed'; err: unknown };

function branchStatus(
  db: string,
  branch: string,
  r: Ref,
  state: BranchStatus['state'],
  path: string,
  now: Date,
  liveness: Liveness,
) {
  const cps = Object.entries(r.checkpoints)
    .map(([name, c]) => ({ name, txid: c.txid, createdAt: c.created_at, meta: c.meta }))
    .sort((a, b) => a.txid - b.txid || a.name.localeCompare(b.name));
  const expiry = expiryOf(r, liveness);
  const out: BranchStatus = {
    db,
    branch,
    state,
    storage: r.base ? 'shared' : 'materialized',
    txid: r.head_txid,
    checkpoints: cps.map((c) => c.name),
    checkpointsV2: cps,
    protected: r.protected ?? false,
    checkedOut: existsSync(path),
    ttl: r.ttl,
    remaining: expiry === undefined ? undefined : remainingUntil(expiry, now),
    ...(expiry !== undefined ? { expiresAt: expiryText(expiry) } : {}),
    leaseHolder: r.lease_holder,
    leaseExpiry: leaseEndText(r, liveness),
    touchedAt: r.touched_at,
    parent: r.parent,
    meta: r.meta,
  };
  return out;
}

// The refs to read: one listing of refs/ for the whole store, one of refs/<db>/ per named database (so a database's
// status never lists another's). A named database with no refs is not found, before anything is reported.
async function listRefs(ctx: OpsContext, f: StatusFilter): Promise<Array<{ db: string; branch: string }>> {
  if (f.dbs === undefined) return ctx.store.listAllBranches();
  const out: Array<{ db: string; branch: string }> = [];
  for (const db of f.dbs) {
    const branches = await ctx.store.listBranches(db);
    if (branches.length === 0)
      throw fail('NOT_FOUND', `no database ${db}`, {
        hint: `run 'offshoot status' to list databases, or 'offshoot create ${db}'`,
      });
    for (const branch of branches) out.push({ db, branch });
  }
  return out;
}

/**
 * `offshoot status`, streamed: reads each listed ref once, in listing order, and hands every branch that matches the
 * filter to `onBranch` as it is read (nothing is kept), then returns the rest of the report. Past the limit a
 * matching branch is only counted; without a state filter its state is not even computed.
 */
export async function scanStatus(
  ctx: OpsContext,
  opts: StatusOptions,
  onBranch: (b: BranchStatus) => void | Promise<void>,
): Promise<StatusTail> {
  const f = statusFilter(opts);
  const now = ctx.now();
  const pairs = await listRefs(ctx, f);
  let reported = 0;
  let more = 0;
  const unreadable: UnreadableRef[] = [];
  // Each daemon's liveness object is read once a scan, however many of its sessions are listed.
  const seen = new Map<string, number>();
  const read = async (db: string, branch: string, full: boolean): Promise<RefRead> => {
    try {
      const got = await ctx.store.tryGetRef(db, branch);
      if (!got) return { kind: 'gone' };
      if (!full && f.states === undefined) return { kind: 'counted', state: undefined };
      const path = checkoutPath(ctx.checkoutRoot, db, branch);
      const liveness = await readLiveness(ctx, [got.ref], seen);
      const atRest = await branchState(got.ref, path, now, liveness);
      const state = opts.stateOf === undefined ? atRest : opts.stateOf(db, branch, atRest);
      if (f.states !== undefined && !f.states.has(state)) return { kind: 'gone' };
      return { kind: 'branch', status: branchStatus(db, branch, got.ref, state, path, now, liveness) };
    } catch (err) {
      if (!hasCode(err, 'CORRUPT')) return { kind: 'failed', err };
      return { kind: 'unreadable', ref: { db, branch, code: err.code, error: err.message, hint: err.hint } };
    }
  };
  // The window may run ahead of the limit by READ_AHEAD full reads; those are counted, never reported. A ref read
  // only to be counted is read again in full if the branches before it left room under the limit after all.
  const window: Array<{ db: string; branch: string; read: Promise<RefRead> }> = [];
  let next = 0;
  const fill = (): void => {
    while (window.length < READ_AHEAD && next < pairs.length) {
      const { db, branch } = pairs[next++] as { db: string; branch: string };
      const full = f.limit === undefined || reported + window.length < f.limit;
      window.push({ db, branch, read: read(db, branch, full) });
    }
  };
  fill();
  let failure: unknown;
  while (window.length > 0) {
    const head = window.shift() as { db: string; branch: string; read: Promise<RefRead> };
    let got = await head.read;
    if (got.kind === 'failed') failure ??= got.err;
    if (failure !== undefined) continue;
    fill();
    if (got.kind === 'counted' && f.limit !== undefined && reported < f.limit)
      got = await read(head.db, head.branch, true);
    if (got.kind === 'failed') {
      failure = got.err;
      continue;
    }
    if (got.kind === 'unreadable') unreadable.push(got.ref);
    if (got.kind === 'counted') more++;
    if (got.kind !== 'branch') continue;
    if (f.limit !== undefined && reported >= f.limit) {
      more++;
      continue;
    }
    reported++;
    await onBranch(got.status);
  }
  if (failure !== undefined) throw failure;
  const entries = await roCacheEntries(ctx.checkoutRoot);
  return {
    unreadable,
    roCache: {
      entries: entries.length,
      bytes: entries.reduce((a, e) => a + e.bytes, 0),
      budget: opts.roCacheBudget || undefined,
    },
    ...(f.limit === undefined ? {} : { truncated: more > 0, more }),
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
