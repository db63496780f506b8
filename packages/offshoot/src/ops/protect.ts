import type { Target } from '../core/target.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import type { OpsContext } from './helpers/context/context.js';

/** `offshoot protect` / `unprotect`: sets or clears a branch's protected flag; the TTL clock is left alone. */
export function setProtected(
  ctx: OpsContext,
  t: Target,
  value: boolean,
): Promise<{ db: string; branch: string; protected: boolean; changed: boolean }> {
  return withBranchLease(ctx, t, () => setProtectedLeased(ctx, t, value));
}

async function setProtectedLeased(
  ctx: OpsContext,
  t: Target,
  value: boolean,
): Promise<{ db: string; branch: string; protected: boolean; changed: boolean }> {
  let changed = false;
  await ctx.store.updateRef(t.db, t.branch, (r) => {
    if ((r.protected ?? false) === value) return undefined;
    changed = true;
    const next = { ...r };
    if (value) next.protected = true;
    else delete next.protected;
    return next;
  });
  return { db: t.db, branch: t.branch, protected: value, changed };
}
