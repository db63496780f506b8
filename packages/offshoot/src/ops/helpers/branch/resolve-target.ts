import type { Target } from '../../../core/target.js';
import { ChainResolver, type ResolvedChain } from '../../../store/chain-resolver.js';
import { readBranch } from './branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { resolvePoint } from '../history/point.js';

/**
 * Resolves `db@branch[@checkpoint]` to the durable chain it names: the head when no checkpoint is given, a
 * checkpoint, or a moment (`@tx:42`, `@at:<RFC 3339>`, through the branch's log).
 */
export async function resolveTargetChain(
  ctx: OpsContext,
  t: Target,
  resolver: ChainResolver = new ChainResolver(ctx.store),
): Promise<ResolvedChain> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  if (t.checkpoint === undefined) return resolver.resolve(ref.lineage, ref.head_txid);
  const p = await resolvePoint(ctx, t, ref, t.checkpoint);
  return resolver.resolve(p.lineage, p.txid);
}
