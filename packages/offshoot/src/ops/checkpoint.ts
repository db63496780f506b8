import type { Meta } from '../core/meta.js';
import type { Ref } from '../core/ref.js';
import { validateName } from '../core/names.js';
import type { Target } from '../core/target.js';
import { checkpointCheckout, type CheckpointResult } from './helpers/checkout/checkpoint-checkout.js';
import type { OpsContext } from './helpers/context/context.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import { type Actor, HUMAN, vetWrite } from './helpers/safety/policy.js';

export type { CheckpointResult } from './helpers/checkout/checkpoint-checkout.js';

/**
 * `offshoot checkpoint db[@branch] <name>` at rest (and, with no name, the implicit checkpoint fork/rollback/promote
 * take of a dirty checkout): writes only the pages that changed since the checkout was materialized or last
 * checkpointed, under the branch lease (see checkpointCheckout).
 */
export async function checkpoint(
  ctx: OpsContext,
  t: Target,
  name: string | undefined,
  meta?: Meta,
  opts: { actor?: Actor } = {},
): Promise<CheckpointResult> {
  if (name !== undefined) validateName('checkpoint', name);
  const actor = opts.actor ?? HUMAN;
  const vet = vetWrite(ctx, t, actor, 'explicit', `offshoot checkpoint ${t.db}@${t.branch} <name>`);
  // A named checkpoint is a durable state: an ephemeral branch is kept first, once the policy allows the write.
  const vetThenKeep = async (ref: Ref): Promise<void> => {
    await vet(ref);
    if (name !== undefined) await ctx.ephemeral?.keep(t);
  };
  return withBranchLease(ctx, t, () => checkpointCheckout(ctx, t, name, meta, vetThenKeep));
}
