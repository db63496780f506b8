import type { Target } from '../core/target.js';
import { readOnlyCheckout } from './helpers/checkout/read-only-checkout.js';
import type { OpsContext } from './helpers/context/context.js';

// The read-only checkouts fill the per-chain cache: a command or the janitor trims it to a budget.
export { enforceRoCacheBudget } from './helpers/checkout/ro-cache.js';

/** `offshoot checkout db[@b] --at <cp> --read-only`: an immutable checkout of a named checkpoint (see readOnlyCheckout). */
export function checkoutAt(
  ctx: OpsContext,
  t: Target,
  checkpoint: string,
  opts: { force?: boolean } = {},
): Promise<{ path: string; cached: boolean }> {
  return readOnlyCheckout(ctx, t, checkpoint, opts);
}
