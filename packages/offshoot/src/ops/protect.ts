import type { Target } from '../core/target.js';
import { expiryOf } from './helpers/branch/expiry.js';
import { readLiveness } from './helpers/branch/lease-liveness.js';
import type { OpsContext } from './helpers/context/context.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import { type Actor, HUMAN, refuseAgentUnprotect } from './helpers/safety/policy.js';
import { logged } from './helpers/history/record.js';

/** What protect or unprotect left, and, for an unprotected branch with a TTL, when it may now be reaped. */
export interface ProtectResult {
  db: string;
  branch: string;
  protected: boolean;
  changed: boolean;
  /** Set when the branch is unprotected and has a TTL: the reap deadline (RFC 3339), now in force. */
  expiresAt?: string;
}

/**
 * `offshoot protect` / `unprotect`: sets or clears a branch's protected flag; the TTL clock is left alone, so
 * unprotecting a branch with a TTL says when it will now expire. Clearing protection is a human's call.
 */
export async function setProtected(
  ctx: OpsContext,
  t: Target,
  value: boolean,
  opts: { actor?: Actor } = {},
): Promise<ProtectResult> {
  if (!value) refuseAgentUnprotect(t.db, t.branch, opts.actor ?? HUMAN);
  return withBranchLease(ctx, t, () => setProtectedLeased(ctx, t, value));
}

async function setProtectedLeased(ctx: OpsContext, t: Target, value: boolean): Promise<ProtectResult> {
  let changed = false;
  const { ref } = await ctx.store.updateRef(t.db, t.branch, (r) => {
    if ((r.protected ?? false) === value) return undefined;
    changed = true;
    const next = { ...r };
    if (value) next.protected = true;
    else delete next.protected;
    return logged(ctx, t.db, t.branch, value ? 'protect' : 'unprotect', r, next);
  });
  // The lease this command holds is given back when it returns: only someone else's counts.
  const deadline = value ? undefined : expiryOf(ref, await readLiveness(ctx, [ref]), ctx.holder);
  return {
    db: t.db,
    branch: t.branch,
    protected: value,
    changed,
    ...(deadline !== undefined ? { expiresAt: new Date(deadline).toISOString() } : {}),
  };
}
