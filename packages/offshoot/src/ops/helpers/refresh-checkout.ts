import { existsSync } from 'node:fs';
import type { Ref } from '../../core/ref.js';
import { quiesce } from '../../sqlite/quiesce.js';
import type { OpsContext } from './context.js';
import { installCheckout } from '../checkout.js';
import { checkoutPath } from './paths.js';

/**
 * After a repoint (rollback, promote, compact), re-materializes the branch's checkout if one exists, by writing a new
 * file and renaming it into place. Best effort: a busy checkout is left as it is (it then reads "detached") and the
 * returned warning says how to refresh it.
 */
export async function refreshCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  label?: string,
): Promise<{ path: string; refreshed: boolean }> {
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  if (!existsSync(path)) return { path, refreshed: false };
  try {
    quiesce(path);
    await installCheckout(ctx, db, branch, ref, label);
    return { path, refreshed: true };
  } catch (err) {
    ctx.warn(
      `${db}@${branch} was repointed but its checkout was not refreshed (${(err as Error).message}); close its connections and run 'offshoot checkout ${db}@${branch}'`,
    );
    return { path, refreshed: false };
  }
}
