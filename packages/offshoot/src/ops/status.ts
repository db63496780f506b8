import { existsSync } from 'node:fs';
import { durationMs, formatDuration, msDuration, parseDuration } from '../core/duration.js';
import { fail, hasCode, type ErrorCode } from '../core/errors.js';
import type { Meta } from '../core/meta.js';
import { branchState, type BranchState } from './helpers/branch-state.js';
import type { OpsContext } from './helpers/context.js';
import { checkoutPath } from './helpers/paths.js';
import { roCacheEntries } from './helpers/ro-cache.js';

/** One checkpoint as status reports it. */
export interface CheckpointStatus {
  name: string;
  txid: number;
  createdAt: string | undefined;
  meta: Meta | undefined;
}

/** One branch as status reports it. */
export interface BranchStatus {
  db: string;
  branch: string;
  state: BranchState;
  storage: 'shared' | 'materialized';
  txid: number;
  /** Checkpoint names, oldest txid first. */
  checkpoints: string[];
  checkpointsV2: CheckpointStatus[];
  protected: boolean;
  checkedOut: boolean;
  ttl: string | undefined;
  /** Time left before the branch may be reaped, or `expired`. */
  remaining: string | undefined;
  leaseHolder: string | undefined;
  leaseExpiry: string | undefined;
  touchedAt: string | undefined;
  parent: string | undefined;
  meta: Meta | undefined;
}

/** A branch whose ref cannot be read: listed by name so every other branch still shows. */
export interface UnreadableRef {
  db: string;
  branch: string;
  code: ErrorCode;
  error: string;
  hint: string | undefined;
}

/** The whole-store status report. */
export interface StatusReport {
  branches: BranchStatus[];
  /** Refs that are malformed; empty when every ref reads. */
  unreadable: UnreadableRef[];
  roCache: { entries: number; bytes: number; budget: number | undefined };
}

/** The reap deadline of a ref: max(touched_at, lease_expiry) + ttl, in ms; undefined without a TTL. */
export function reapDeadline(
  ttl: string | undefined,
  touchedAt: string | undefined,
  leaseExpiry: string | undefined,
): number | undefined {
  if (!ttl) return undefined;
  const from = Math.max(Date.parse(touchedAt ?? '') || 0, Date.parse(leaseExpiry ?? '') || 0);
  return from + durationMs(parseDuration(ttl));
}

/** `offshoot status`: every branch's state, storage class, head, checkpoints, protection and TTL — no database reads. */
export async function status(
  ctx: OpsContext,
  opts: { db?: string; roCacheBudget?: number } = {},
): Promise<StatusReport> {
  const now = ctx.now();
  const pairs =
    opts.db !== undefined
      ? (await ctx.store.listBranches(opts.db)).map((branch) => ({ db: opts.db as string, branch }))
      : await ctx.store.listAllBranches();
  const branches: BranchStatus[] = [];
  const unreadable: UnreadableRef[] = [];
  for (const { db, branch } of pairs) {
    let got;
    try {
      got = await ctx.store.tryGetRef(db, branch);
    } catch (err) {
      if (!hasCode(err, 'CORRUPT')) throw err;
      unreadable.push({ db, branch, code: err.code, error: err.message, hint: err.hint });
      continue;
    }
    if (!got) continue;
    const r = got.ref;
    const path = checkoutPath(ctx.checkoutRoot, db, branch);
    const cps = Object.entries(r.checkpoints)
      .map(([name, c]) => ({ name, txid: c.txid, createdAt: c.created_at, meta: c.meta }))
      .sort((a, b) => a.txid - b.txid || a.name.localeCompare(b.name));
    const deadline = r.protected ? undefined : reapDeadline(r.ttl, r.touched_at, r.lease_expiry);
    let remaining: string | undefined;
    if (deadline !== undefined)
      remaining =
        deadline <= now.getTime()
          ? 'expired'
          : formatDuration(msDuration(Math.ceil((deadline - now.getTime()) / 1000) * 1000));
    branches.push({
      db,
      branch,
      state: await branchState(r, path, now),
      storage: r.base ? 'shared' : 'materialized',
      txid: r.head_txid,
      checkpoints: cps.map((c) => c.name),
      checkpointsV2: cps,
      protected: r.protected ?? false,
      checkedOut: existsSync(path),
      ttl: r.ttl,
      remaining,
      leaseHolder: r.lease_holder,
      leaseExpiry: r.lease_expiry,
      touchedAt: r.touched_at,
      parent: r.parent,
      meta: r.meta,
    });
  }
  if (opts.db !== undefined && branches.length === 0 && unreadable.length === 0)
    throw fail('NOT_FOUND', `no database ${opts.db}`, {
      hint: `run 'offshoot status' to list databases, or 'offshoot create ${opts.db}'`,
    });
  const entries = await roCacheEntries(ctx.checkoutRoot);
  return {
    branches,
    unreadable,
    roCache: {
      entries: entries.length,
      bytes: entries.reduce((a, e) => a + e.bytes, 0),
      budget: opts.roCacheBudget || undefined,
    },
  };
}
