import { existsSync } from 'node:fs';
import { asOffshootError, fail, type OffshootError } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import { quiesce } from '../../../sqlite/quiesce.js';
import type { OpsContext } from '../context/context.js';
import { installCheckout } from './install-checkout.js';
import { checkoutPath } from '../context/paths.js';

/** Where a branch's checkout is after a repoint, and, when it could not be refreshed, why (with the fix). */
export interface RefreshOutcome {
  path: string;
  refreshed: boolean;
  /** Set when a checkout exists but still holds the state from before the repoint. */
  error?: OffshootError;
}

/**
 * After a repoint (rollback, promote, compact), re-materializes the branch's checkout if one exists, by writing a new
 * file and renaming it into place, once `keep` has kept what it holds that no checkpoint recorded. A busy checkout is left as it is (it then reads "detached"); the returned error
 * (same code as the cause) says the branch moved and how to refresh the checkout, for the caller to report.
 */
export async function refreshCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  what = 'repointed',
  label?: string,
  keep?: () => Promise<unknown>,
): Promise<RefreshOutcome> {
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  if (!existsSync(path)) return { path, refreshed: false };
  try {
    quiesce(path);
    // Writes no checkpoint recorded (a checkout the branch had already moved under) are kept before the file is
    // replaced; if keeping them fails, the checkout is left as it is.
    await keep?.();
    await installCheckout(ctx, db, branch, ref, label);
    return { path, refreshed: true };
  } catch (err) {
    const e = asOffshootError(err);
    const error = fail(
      e.code,
      `${db}@${branch} was ${what}, but its checkout ${path} was not refreshed and still holds the old state (${e.message})`,
      {
        hint: `close the connections holding it, then run 'offshoot checkout ${db}@${branch}' to refresh it`,
        retryable: e.retryable,
        cause: err,
      },
    );
    return { path, refreshed: false, error };
  }
}
