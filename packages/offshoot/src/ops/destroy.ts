import { rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fail, hasCode } from '../core/errors.js';
import type { Target } from '../core/target.js';
import { quiesce } from '../sqlite/quiesce.js';
import { leaseLive } from './helpers/branch-ref.js';
import { withBranchLease } from './helpers/branch-lease.js';
import type { OpsContext } from './helpers/context.js';
import { checkoutFiles, checkoutPath } from './helpers/paths.js';
import { refuseProtected } from './promote.js';

/** What destroy removed. */
export interface DestroyResult {
  db: string;
  branch: string;
  removedCheckout: boolean;
}

/**
 * `offshoot destroy db[@b]`: claims the ref with a `deleting` compare-and-swap, makes sure no connection holds the
 * checkout, deletes the ref conditionally, then the local checkout files. Protected branches and live leases need
 * force. A parent's destroy never touches a child: only the ref goes; shared objects live on until GC finds them
 * unreachable.
 */
export function destroy(
  ctx: OpsContext,
  t: Target,
  opts: { force?: boolean; reaping?: boolean } = {},
): Promise<DestroyResult> {
  return withBranchLease(ctx, t, () => destroyLeased(ctx, t, opts));
}

async function destroyLeased(
  ctx: OpsContext,
  t: Target,
  opts: { force?: boolean; reaping?: boolean },
): Promise<DestroyResult> {
  const force = opts.force ?? false;
  const claimed = await ctx.store.updateRef(t.db, t.branch, (ref) => {
    if (ref.deleting)
      throw fail('BUSY', `${t.db}@${t.branch} is already being destroyed`, {
        retryable: true,
        hint: `retry later, or run 'offshoot gc' to clear a stale claim`,
      });
    if (!opts.reaping) refuseProtected(ref, t.db, t.branch, 'destroy', force);
    if (!force && leaseLive(ref, ctx.now()) && ref.lease_holder !== ctx.holder) {
      throw fail('LEASE_HELD', `${t.db}@${t.branch} has a live lease held by ${ref.lease_holder}`, {
        hint: `close that session first (offshoot session close ${t.db}@${t.branch}), or pass --force`,
      });
    }
    return { ...ref, deleting: true, deleting_at: ctx.now().toISOString() };
  });
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (existsSync(path) && !force) {
    try {
      quiesce(path);
    } catch (err) {
      if (hasCode(err, 'BUSY')) {
        await ctx.store.updateRef(t.db, t.branch, (ref) => {
          const r = { ...ref };
          delete r.deleting;
          delete r.deleting_at;
          return r;
        });
      }
      throw err;
    }
  }
  await ctx.store.deleteRef(t.db, t.branch, claimed.etag);
  let removed = false;
  for (const f of checkoutFiles(path)) {
    if (existsSync(f)) removed = true;
    await rm(f, { force: true });
  }
  return { db: t.db, branch: t.branch, removedCheckout: removed };
}
