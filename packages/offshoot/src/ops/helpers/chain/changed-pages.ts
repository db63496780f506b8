import type { DataObject } from '../../../core/keys.js';
import { LtxDecoder } from '../../../ltx/decoder.js';
import type { ResolvedChain } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';

async function segmentPages(ctx: OpsContext, member: DataObject, into: Set<number>): Promise<void> {
  const dec = new LtxDecoder(await ctx.store.backend.getStream(member.key));
  try {
    for await (const p of dec.pages()) into.add(p.pgno);
  } finally {
    await dec.close();
  }
}

/**
 * The pages that can differ between two chains: the pages of every segment past their common prefix. Undefined
 * (compare everything) when either side diverges through a snapshot, since a snapshot rewrites every page.
 */
export async function changedPagesBetween(
  ctx: OpsContext,
  left: ResolvedChain,
  right: ResolvedChain,
  commits: [number, number],
): Promise<Set<number> | undefined> {
  let common = 0;
  while (
    common < left.members.length &&
    common < right.members.length &&
    left.members[common]?.key === right.members[common]?.key
  )
    common++;
  if (common === 0) return undefined;
  const rest = [...left.members.slice(common), ...right.members.slice(common)];
  if (rest.some((m) => m.kind === 'snapshot')) return undefined;
  const pages = new Set<number>();
  for (const m of rest) await segmentPages(ctx, m, pages);
  // Pages past the shorter file exist on one side only.
  for (let p = Math.min(...commits) + 1; p <= Math.max(...commits); p++) pages.add(p);
  return pages;
}
