import type { Target } from '../core/target.js';
import { readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { type CheckoutResult, writableCheckout } from './helpers/checkout/writable-checkout.js';
import type { OpsContext } from './helpers/context/context.js';
import { keepDivergedCheckout } from './helpers/safety/keep-diverged.js';
import { type Actor, HUMAN, refuseAgentCheckout } from './helpers/safety/policy.js';

export type { CheckoutResult } from './helpers/checkout/writable-checkout.js';

/** What checkout may do to an existing file (force moves it aside, discard drops its uncheckpointed changes), and who asks. */
export interface CheckoutOptions {
  force?: boolean;
  discard?: boolean;
  actor?: Actor;
}

/**
 * `offshoot checkout db[@branch]`: returns the writable checkout, refused while another holder's lease is live and
 * where the policy keeps `actor` from writing (an agent never writes into the way back of a protected branch, nor
 * discards uncheckpointed changes). See writableCheckout for how an existing file is proven current, kept or moved
 * aside.
 */
export async function checkout(ctx: OpsContext, t: Target, opts: CheckoutOptions = {}): Promise<CheckoutResult> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  await refuseForeignLease(ctx, t.db, t.branch, ref, 'checkout');
  await refuseAgentCheckout(ctx, t.db, t.branch, ref, opts.actor ?? HUMAN, opts.discard ?? false);
  return writableCheckout(ctx, t, ref, { ...opts, keepDiverged: () => keepDivergedCheckout(ctx, t, ref) });
}

/**
 * The checkout of a branch a live session holds open here: its path, as writable as a checkout at rest, so the same
 * rule decides whether `actor` may have it. Nothing is materialized; the head is the session's durable one.
 */
export async function checkoutLive(
  ctx: OpsContext,
  t: Target,
  path: string,
  actor: Actor = HUMAN,
): Promise<CheckoutResult> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  await refuseAgentCheckout(ctx, t.db, t.branch, ref, actor, false);
  return { path, reused: true, txid: ref.head_txid, dirty: false, live: true };
}
