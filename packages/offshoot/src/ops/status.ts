import { existsSync } from 'node:fs';
import { fail, hasCode } from '../core/errors.js';
import type { BranchStatus, UnreadableRef } from './helpers/branch/branch-status.js';
import { branchState } from './helpers/branch/branch-state.js';
import { expiryOf, expiryText, remainingUntil } from './helpers/branch/expiry.js';
import type { OpsContext } from './helpers/context/context.js';
import { checkoutPath } from './helpers/context/paths.js';
import { roCacheEntries } from './helpers/checkout/ro-cache.js';

export type { BranchStatus, CheckpointStatus, UnreadableRef } from './helpers/branch/branch-status.js';

type Read = { branch: BranchStatus } | { unreadable: UnreadableRef } | undefined;

// How many refs status reads at once.
const STATUS_READS = 32;

/** The whole-store status report. */
export interface StatusReport {
  branches: BranchStatus[];
  /** Refs that are malformed; empty when every ref reads. */
  unreadable: UnreadableRef[];
  roCache: { entries: number; bytes: number; budget: number | undefined };
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
  const one = async ({ db, branch }: { db: string; branch: string }): Promise<Read> => {
    let got;
    try {
      got = await ctx.store.tryGetRef(db, branch);
    } catch (err) {
      if (!hasCode(err, 'CORRUPT')) throw err;
      return { unreadable: { db, branch, code: err.code, error: err.message, hint: err.hint } };
    }
    if (!got) return undefined;
    const r = got.ref;
    const path = checkoutPath(ctx.checkoutRoot, db, branch);
    const cps = Object.entries(r.checkpoints)
      .map(([name, c]) => ({ name, txid: c.txid, createdAt: c.created_at, meta: c.meta }))
      .sort((a, b) => a.txid - b.txid || a.name.localeCompare(b.name));
    const expiry = expiryOf(r);
    return {
      branch: {
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
        remaining: expiry === undefined ? undefined : remainingUntil(expiry, now),
        ...(expiry !== undefined ? { expiresAt: expiryText(expiry) } : {}),
        leaseHolder: r.lease_holder,
        leaseExpiry: r.lease_expiry,
        touchedAt: r.touched_at,
        parent: r.parent,
        meta: r.meta,
      },
    };
  };
  const branches: BranchStatus[] = [];
  const unreadable: UnreadableRef[] = [];
  // Refs are read STATUS_READS at a time (on S3 each is a round trip), and reported in listing order.
  for (let i = 0; i < pairs.length; i += STATUS_READS) {
    for (const r of await Promise.all(pairs.slice(i, i + STATUS_READS).map(one))) {
      if (r === undefined) continue;
      if ('unreadable' in r) unreadable.push(r.unreadable);
      else branches.push(r.branch);
    }
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
