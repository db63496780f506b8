import { fail, hasCode } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import { leaseLive } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { expiryOf } from '../branch/expiry.js';
import { destroyBranch } from './destroy-branch.js';

/** Branches reaped, and per-branch failures (the pass continues past them). */
export interface ReapReport {
  reaped: string[];
  errors: string[];
}

/**
 * Expires unprotected, unleased branches whose TTL has run out from max(touched_at, lease_expiry): each is claimed
 * with a `reaping` compare-and-swap (which a racing touch loses to, and vice versa) and then destroyed. A claim
 * already on the ref is taken over: it was left by a reaper that died before its destroy, and since a claimed
 * branch can be neither touched nor leased it is still due; destroy's own claim picks one winner among reapers.
 */
export async function reapExpired(ctx: OpsContext): Promise<ReapReport> {
  const report: ReapReport = { reaped: [], errors: [] };
  for (const { db, branch } of await ctx.store.listAllBranches()) {
    // A malformed ref is reported by status and gc's mark; it is never due for reaping.
    const got = await ctx.store.tryGetRef(db, branch).catch((err: unknown) => {
      if (hasCode(err, 'CORRUPT')) return undefined;
      throw err;
    });
    if (!got || !eligible(ctx, got.ref)) continue;
    const name = `${db}@${branch}`;
    try {
      await ctx.store.updateRef(db, branch, (r) => {
        if (!eligible(ctx, r)) throw fail('CAS_CONFLICT', `${name} is no longer due for reaping`);
        return r.reaping ? undefined : { ...r, reaping: true };
      });
    } catch (err) {
      report.errors.push(`${name}: ${(err as Error).message}`);
      continue;
    }
    try {
      await destroyBranch(ctx, { db, branch }, { reaping: true });
      report.reaped.push(name);
    } catch (err) {
      report.errors.push(`${name}: ${(err as Error).message}`);
      // A destroy claim on the ref now belongs to another reaper's destroy, which this must not disturb.
      await ctx.store
        .updateRef(db, branch, (r) => {
          if (r.deleting) return undefined;
          const next = { ...r };
          delete next.reaping;
          return next;
        })
        .catch(() => undefined);
    }
  }
  return report;
}

function eligible(ctx: OpsContext, r: Ref): boolean {
  if (r.protected || !r.ttl || r.deleting) return false;
  const now = ctx.now();
  if (leaseLive(r, now)) return false;
  const deadline = expiryOf(r);
  return deadline !== undefined && deadline <= now.getTime();
}
