import { fail, hasCode } from '../../core/errors.js';
import type { Ref } from '../../core/ref.js';
import type { ChainResolver } from '../../store/chain-resolver.js';
import { refuseForeignLease } from './branch-ref.js';
import type { OpsContext } from './context.js';
import { refreshCheckout } from './refresh-checkout.js';
import { newLineageAt } from './new-lineage.js';

/** The previous undo point is replaced only when nobody has claimed it: not protected, not leased by another. */
function refuseReplacing(ctx: OpsContext, db: string, name: string, ref: Ref): void {
  if (ref.protected) {
    throw fail('PROTECTED', `${db}@${name} is protected, so the new undo point cannot replace it`, {
      hint: `promote or destroy ${db}@${name} (with --force) first, or unprotect it`,
    });
  }
  refuseForeignLease(ctx, db, name, ref, 'replace undo point');
}

/** The shortest life an undo point gets: at least a day. */
export const SAFETY_FORK_TTL = '24h0m0s';

/**
 * Keeps a branch's current head as `<branch>-<suffix>` (pre-rollback / pre-promote): a shared fork with a TTL of
 * at least 24h, replacing the previous one of the same name (refused if that one is protected or leased by another;
 * its checkout, if any, is refreshed). Returns the safety branch's name.
 */
export async function keepSafetyFork(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  suffix: 'pre-rollback' | 'pre-promote',
  resolver: ChainResolver,
): Promise<string> {
  const name = `${branch}-${suffix}`.slice(0, 128);
  const fresh = await newLineageAt(ctx, db, resolver, ref.lineage, ref.head_txid);
  const now = ctx.now().toISOString();
  const safety: Ref = {
    schema: 2,
    lineage: fresh.lineage,
    epoch: 1,
    head_txid: ref.head_txid,
    head_epoch: 1,
    checkpoints: { fork: { txid: ref.head_txid, epoch: 1, created_at: now } },
    parent: `${db}@${branch}@${ref.head_txid}`,
    ttl: SAFETY_FORK_TTL,
    touched_at: now,
    meta: { 'offshoot.safety': suffix, 'offshoot.of': branch },
  };
  if (fresh.base) safety.base = fresh.base;
  for (let i = 0; ; i++) {
    const old = await ctx.store.tryGetRef(db, name);
    if (old) refuseReplacing(ctx, db, name, old.ref);
    try {
      if (old) await ctx.store.casRef(db, name, old.etag, { ...safety, generation: old.ref.generation ?? 0 });
      else await ctx.store.createRef(db, name, safety);
      if (old) await refreshCheckout(ctx, db, name, safety);
      return name;
    } catch (err) {
      if (i >= 3 || !(hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'ALREADY_EXISTS'))) throw err;
    }
  }
}
