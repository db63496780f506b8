import { existsSync } from 'node:fs';
import { fail, hasCode } from '../../../core/errors.js';
import { inBatches } from '../../../core/in-batches.js';
import type { Ref } from '../../../core/ref.js';
import { holdAlone } from '../../../sqlite/quiesce.js';
import { leaseLive } from '../branch/branch-ref.js';
import { readLiveness, type Liveness } from '../branch/lease-liveness.js';
import type { ReapHold } from '../branch/reap-hold.js';
import { checkoutWork } from '../checkout/checkout-work.js';
import type { OpsContext } from '../context/context.js';
import { checkoutPath } from '../context/paths.js';
import { expiryOf } from '../branch/expiry.js';
import { destroyBranch } from './destroy-branch.js';
import { readRefSnapshot, type SnapshotRef } from './ref-snapshot.js';

/** Expired branches destroyed at once: each destroy's durable writes overlap the others'. */
const REAP_CONCURRENCY = 8;

/** An expired branch the reap left alone this pass, and why (see ReapHold). */
export interface PostponedReap {
  name: string;
  reason: ReapHold;
}

/** Branches reaped, branches whose reap waits for their checkout, and per-branch failures (the pass continues past them). */
export interface ReapReport {
  reaped: string[];
  postponed: PostponedReap[];
  errors: string[];
}

/**
 * Expires unprotected, unleased branches whose TTL has run out from max(touched_at, the lease's end): each is claimed
 * with a `reaping` compare-and-swap (which a racing touch loses to, and vice versa) and then destroyed. Writes to a
 * checkout are activity: a branch whose checkout holds work no checkpoint has, or that a connection holds open, is
 * postponed (reported, nothing written) until a checkpoint, a discard or an explicit destroy settles it; the destroy
 * checks again while it keeps every other connection out of the checkout. A claim
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
  const outcomes: Outcome[] = new Array(due.length);
  await inBatches(due, REAP_CONCURRENCY, async ({ db, branch, got }, i) => {
    const name = `${db}@${branch}`;
    try {
      const hold = await heldCheckout(ctx, db, branch);
      if (hold === undefined) {
        outcomes[i] = await reapOne(ctx, db, branch);
        return;
      }
      // A claim left by a reaper that died would keep the branch from being touched or checkpointed meanwhile.
      if (got?.ref.reaping) await dropReapingClaim(ctx, db, branch);
      outcomes[i] = { postponed: { name, reason: hold } };
    } catch (err) {
      outcomes[i] = { error: `${name}: ${(err as Error).message}` };
    }
  });
  const report: ReapReport = { reaped: [], postponed: [], errors: [] };
  for (const o of outcomes) {
    if (o.reaped !== undefined) report.reaped.push(o.reaped);
    if (o.postponed !== undefined) report.postponed.push(o.postponed);
    if (o.error !== undefined) report.errors.push(o.error);
  }
  return report;
}

type Outcome = { reaped?: string; postponed?: PostponedReap; error?: string };

/**
 * What holds a due branch's checkout, looked at before any claim is written (so a held branch costs no write): its
 * work (O(1)), then whether another connection has it open (a lock taken and given back at once).
 */
async function heldCheckout(ctx: OpsContext, db: string, branch: string): Promise<ReapHold | undefined> {
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  if (!existsSync(path)) return undefined;
  const work = await checkoutWork(path);
  if (work !== undefined) return work.reason;
  try {
    holdAlone(path).release();
  } catch (err) {
    if (hasCode(err, 'BUSY')) return 'open_connection';
    throw err;
  }
  return undefined;
}

async function reapOne(ctx: OpsContext, db: string, branch: string): Promise<Outcome> {
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
    const r = await destroyBranch(ctx, { db, branch }, { reaping: true });
    if (r.postponed !== undefined) {
      await dropReapingClaim(ctx, db, branch);
      return { postponed: { name, reason: r.postponed } };
    }
    return { reaped: name };
  } catch (err) {
    await dropReapingClaim(ctx, db, branch).catch(() => undefined);
    return { error: `${name}: ${(err as Error).message}` };
  }
}

/** Takes the reaping claim back off a branch the reap did not destroy. */
async function dropReapingClaim(ctx: OpsContext, db: string, branch: string): Promise<void> {
  // A destroy claim on the ref now belongs to another reaper's destroy, which this must not disturb.
  await ctx.store.updateRef(db, branch, (r) => {
    if (r.deleting) return undefined;
    const next = { ...r };
    delete next.reaping;
    return next;
  });
}

function eligible(ctx: OpsContext, r: Ref, liveness: Liveness): boolean {
  if (r.protected || !r.ttl || r.deleting) return false;
  const now = ctx.now();
  if (leaseLive(r, now, liveness)) return false;
  const deadline = expiryOf(r, liveness);
  return deadline !== undefined && deadline <= now.getTime();
}

/** Which of a pass's postponements are news to a long-lived reaper (which logs each once); remembers this pass's. */
export function newlyPostponed(seen: Map<string, ReapHold>, pass: readonly PostponedReap[]): PostponedReap[] {
  const fresh = pass.filter((p) => seen.get(p.name) !== p.reason);
  seen.clear();
  for (const p of pass) seen.set(p.name, p.reason);
  return fresh;
}
