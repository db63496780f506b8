import { baseKey, parseDataKey } from '../../core/keys.js';
import { ChainResolver } from '../../store/chain-resolver.js';
import type { OpsContext } from './context.js';
import { prefixIds } from './materialize.js';

/** A live branch's own lineage position: objects above its head at or above its epoch may be a flush in flight. */
interface LiveHead {
  lineage: string;
  epoch: number;
  head: number;
}

/** The reachable set: every object some live branch's chain resolves through, plus the base pointers on spines. */
export interface Mark {
  live: Set<string>;
  heads: LiveHead[];
  /** The read-only cache id of every prefix of every live chain: the cache entries a live chain can use. */
  chainIds: Set<string>;
}

/**
 * Marks the union, over every branch, of its chain at head and at every checkpoint — resolved by the same
 * ChainResolver the read path uses — plus every base.json along its base spine. Any failure throws: an incomplete
 * mark must delete nothing.
 */
export async function markLive(ctx: OpsContext): Promise<Mark> {
  const resolver = new ChainResolver(ctx.store);
  const live = new Set<string>();
  const heads: LiveHead[] = [];
  const chainIds = new Set<string>();
  for (const { db, branch } of await ctx.store.listAllBranches()) {
    const got = await ctx.store.tryGetRef(db, branch);
    if (!got) continue;
    const r = got.ref;
    heads.push({ lineage: r.lineage, epoch: r.epoch, head: r.head_txid });
    const txids = new Set([r.head_txid, ...Object.values(r.checkpoints).map((c) => c.txid)]);
    for (const txid of txids) {
      const chain = await resolver.resolve(r.lineage, txid);
      for (const m of chain.members) live.add(m.key);
      for (const id of prefixIds(chain.members)) chainIds.add(id);
      for (const k of chain.baseKeys) live.add(k);
    }
    for (let lin: string | undefined = r.lineage, hops = 0; lin !== undefined && hops < 4096; hops++) {
      const base = await resolver.base(lin);
      if (base === undefined) break;
      live.add(baseKey(lin));
      lin = base.lineage;
    }
  }
  return { live, heads, chainIds };
}

/** True when GC must keep key under this mark: reachable, or above a live head in that head's lineage at epoch ≥ its. */
export function keeps(mark: Mark, key: string): boolean {
  if (mark.live.has(key)) return true;
  const d = parseDataKey(key);
  if (d === undefined) return false;
  return mark.heads.some((h) => h.lineage === d.lineage && d.epoch >= h.epoch && d.maxTxid > h.head);
}
