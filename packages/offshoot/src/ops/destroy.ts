import type { Target } from '../core/target.js';
import type { Actor } from './helpers/safety/policy.js';
import { checkDestroyBranch, destroyBranch, type DestroyResult } from './helpers/gc/destroy-branch.js';
import type { OpsContext } from './helpers/context/context.js';

export type { DestroyResult } from './helpers/gc/destroy-branch.js';
// What a destroy would discard of a checkout, for a question asked before it.
export { type CheckoutWork, checkoutWork } from './helpers/checkout/checkout-work.js';

/** `offshoot destroy db[@b] [--force]`: removes a branch and its checkout (see destroyBranch). */
export function destroy(
  ctx: OpsContext,
  t: Target,
  opts: { force?: boolean; actor?: Actor } = {},
): Promise<DestroyResult> {
  return destroyBranch(ctx, t, opts);
}

/**
 * Runs every refusal `destroy` would on the branch as it stands, and changes nothing: whether this actor's destroy
 * would go ahead. A caller asks it before it asks its human (`check` on the wire).
 */
export function checkDestroy(ctx: OpsContext, t: Target, opts: { force?: boolean; actor?: Actor } = {}): Promise<void> {
  return checkDestroyBranch(ctx, t, opts);
}
