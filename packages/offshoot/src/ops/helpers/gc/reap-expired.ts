import { fail } from '../../../core/errors.js';
import { inBatches } from '../../../core/in-batches.js';
import type { Ref } from '../../../core/ref.js';
import { leaseLive } from '../branch/branch-ref.js';
import { readLiveness, type Liveness } from '../branch/lease-liveness.js';
import type { OpsContext } from '../context/context.js';
import { expiryOf } from '../branch/expiry.js';
import { destroyBranch } from './destroy-branch.js';
import { readRefSnapshot, type SnapshotRef } from './ref-snapshot.js';

/** Expired branches destroyed at once: each destroy's durable writes overlap the others'. */
const REAP_CONCURRENCY = 8;

/** Branches reaped, and per-branch failures (the pass continues past them). */
export interface ReapReport {
  reaped: string[];
  errors: string[];
}

/**
 * Expires unprotected, unleased branches whose TTL has run out from max(touched_at, the lease's end): each is claimed
 * with a `reaping` compare-and-swap (which a racing touch loses to, and vice versa) and then destroyed. A claim
 * already on the ref is taken over: it was left by a reaper that died before its destroy, and since a claimed
 * branch can be neither touched nor leased it is still due; destroy's own claim picks one winner among reapers.
 * `refs` is the snapshot a GC pass already read (else the refs are read here): it only picks the candidates, each
 * re-checked against a fresh read by the claim's compare-and-swap.
 */
export async function reapExpired(ctx: OpsContext, refs?: readonly SnapshotRef[]): Promise<ReapReport> {
  // A malformed ref is reported by status and gc's mark; it is never due for reaping.
  const all = refs ?? (await readRefSnapshot(ctx));
  const liveness = await readLiveness(
    ctx,
    all.flatMap((x) => (x.got === undefined ? [] : [x.got.ref])),
  );
  const due = all.filter((x) => x.got !== undefined && eligible(ctx, x.got.ref, liveness));
  // Branches reaped at once, each on its own ref; the report keeps the listing's order.
  const outcomes: Array<{ reaped?: string; error?: string }> = new Array(due.length);
  await inBatches(due, REAP_CONCURRENCY, async ({ db, branch }, i) => {
    outcomes[i] = await reapOne(ctx, db, branch);
  });
  const report: ReapReport = { reaped: [], errors: [] };
  for (const o of outcomes) {
    if (o.reaped !== undefined) report.reaped.push(o.reaped);
    if (o.error !== undefined) report.errors.push(o.error);
  }
  return report;
}

async function reapOne(ctx: OpsContext, db: string, branch: string): Promise<{ reaped?: string; error?: string }> {
  const name = `${db}@${branch}`;
  try {
    await ctx.store.updateRef(db, branch, async (r) => {
      // Liveness read afresh: a session opened since the snapshot stands on an object the snapshot's reading predates.
      if (!eligible(ctx, r, await readLiveness(ctx, [r])))
        throw fail('CAS_CONFLICT', `${name} is no longer due for reaping`);
      return r.reaping ? undefined : { ...r, reaping: true };
    });
  } catch (err) {
    return { error: `${name}: ${(err as Error).message}` };
  }
  try {
    await destroyBranch(ctx, { db, branch }, { reaping: true });
    return { reaped: name };
  } catch (err) {
    // A destroy claim on the ref now belongs to another reaper's destroy, which this must not disturb.
    await ctx.store
      .updateRef(db, branch, (r) => {
        if (r.deleting) return undefined;
        const next = { ...r };
        delete next.reaping;
        return next;
      })
      .catch(() => undefined);
    return { error: `${name}: ${(err as Error).message}` };
  }
}

function eligible(ctx: OpsContext, r: Ref, liveness: Liveness): boolean {
  if (r.protected || !r.ttl || r.deleting) return false;
  const now = ctx.now();
  if (leaseLive(r, now, liveness)) return false;
  const deadline = expiryOf(r, liveness);
  return deadline !== undefined && deadline <= now.getTime();
}
