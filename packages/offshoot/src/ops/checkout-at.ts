import type { Target } from '../core/target.js';
import { readOnlyCheckout } from './helpers/checkout/read-only-checkout.js';
import type { OpsContext } from './helpers/context/context.js';

/** `offshoot checkout db[@b] --at <cp> --read-only`: an immutable checkout of a named checkpoint (see readOnlyCheckout). */
export function checkoutAt(
  ctx: OpsContext,
  t: Target,
  checkpoint: string,
  opts: { force?: boolean } = {},
): Promise<{ path: string; cached: boolean }> {
  return readOnlyCheckout(ctx, t, checkpoint, opts);
}
