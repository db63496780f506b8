import type { DataObject } from '../../../core/keys.js';
import type { Ref } from '../../../core/ref.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';
import { chainBound, type Compaction, compactChain, roomForHead, softBound } from './chain-writer.js';
import { cachedChain } from './materialize.js';

/** A chain as a live writer carries it: its lineage, the head it ends at, and its members (oldest first). */
interface Carried {
  lineage: string;
  head: number;
  members: DataObject[];
}

/**
 * The chain at a live session's head: resolved from the store once, then carried forward by the session's own
 * flushes and merges (nobody else writes the lineage while its lease is the session's), so a flush costs no listing of
 * the lineage. Merges run in the background, beside the flushes, and keep the chain at its soft bound; a flush that
 * finds it at the hard bound merges inline first (roomAt). A failed merge costs a longer chain, never a flush.
 */
export class LiveChain {
  private chain: Carried | undefined;
  private merging: Promise<void> | undefined;

  constructor(
    private readonly ctx: OpsContext,
    private readonly db: string,
    private readonly log: (message: string) => void,
  ) {}

  /** The members of the chain at the ref's head: the chain carried, or resolved from the store once. */
  private async at(ref: Ref): Promise<DataObject[]> {
    if (this.chain && this.chain.lineage === ref.lineage && this.chain.head === ref.head_txid)
      return this.chain.members;
    // By key alone: the flushes and merges that carry it forward need its members' keys and spans, not their sizes.
    const chain = await new ChainResolver(this.ctx.store, { sizes: false }).resolve(ref.lineage, ref.head_txid);
    this.chain = { lineage: ref.lineage, head: ref.head_txid, members: chain.members };
    return chain.members;
  }

  /**
   * The chain a segment lands on: as it is below the hard bound; at the bound (background merges fell behind) the
   * merge in flight is awaited and, if the chain is still at the bound, merged inline under `epoch`. A failed merge
   * costs a longer chain, never the flush: the chain is re-resolved from the store (an object it named may have been
   * collected).
   */
  async roomAt(ref: Ref, epoch: number): Promise<Compaction> {
    let members = await this.at(ref);
    if (members.length < chainBound(this.ctx)) return { members };
    if (this.merging) {
      await this.merged();
      members = await this.at(ref);
    }
    try {
      const c = await roomForHead(this.ctx, this.db, ref.lineage, ref.head_txid, epoch, members);
      this.chain = { lineage: ref.lineage, head: ref.head_txid, members: c.members };
      return c;
    } catch (err) {
      this.log(`chain not compacted before flush (it stays longer): ${(err as Error).message}`);
      this.chain = undefined;
      return { members: await this.at(ref) };
    }
  }

  /**
   * Carries the chain past a head just written at `txid` on the ref's head: a snapshot starts it anew, a segment
   * lands on the chain below it (`below`, or the chain a background merge landed meanwhile).
   */
  advance(ref: Ref, txid: number, head: DataObject, snapshot: boolean, below: DataObject[]): void {
    const c = this.chain;
    const under = c && c.lineage === ref.lineage && c.head === ref.head_txid ? c.members : below;
    this.chain = { lineage: ref.lineage, head: txid, members: snapshot ? [head] : [...under, head] };
  }

  /** The head's image in the per-chain cache, which a snapshot writes its changed pages over. */
  async headImage(ref: Ref): Promise<string> {
    const chain = await new ChainResolver(this.ctx.store, { sizes: false }).resolve(ref.lineage, ref.head_txid);
    return (await cachedChain(this.ctx, this.db, chain)).path;
  }

  /** Resolves once the background merge in flight, if any, has landed (or failed, which costs a longer chain). */
  async merged(): Promise<void> {
    while (this.merging) await this.merging;
  }

  /**
   * Starts the background merge under the writer's epoch (read as each merge starts: a flush may bump it) when the
   * chain has outgrown its soft bound and none is in flight; `stopped` ends it between merges (the writer was
   * fenced). Never throws.
   */
  mergeBehind(epoch: () => number, stopped: () => boolean): void {
    if (this.merging) return;
    if (!this.chain || this.chain.members.length <= softBound(this.ctx)) return;
    this.merging = this.mergeLoop(epoch, stopped)
      .catch((err: unknown) => this.log(`chain not compacted: ${(err as Error).message}`))
      .finally(() => {
        this.merging = undefined;
      });
  }

  /**
   * Merges the chain back to its soft bound while flushes go on: each merge is planned on the chain at one head and
   * its result is spliced under whatever flushes landed meanwhile (they only append). The merge never moves the
   * ref, so it cannot lose a flush; a failure is logged and the chain re-resolved on the next flush.
   */
  private async mergeLoop(epoch: () => number, stopped: () => boolean): Promise<void> {
    for (;;) {
      const before = this.chain;
      if (!before || stopped() || before.members.length <= softBound(this.ctx)) return;
      let members: DataObject[];
      try {
        const c = await compactChain(this.ctx, this.db, before.lineage, before.head, epoch(), before.members);
        if (!c.merged) return;
        members = c.members;
      } catch (err) {
        this.log(`chain not compacted (the next flush retries): ${(err as Error).message}`);
        this.chain = undefined;
        return;
      }
      const now = this.chain;
      const n = before.members.length;
      const grown =
        now !== undefined &&
        now.lineage === before.lineage &&
        now.members.length >= n &&
        before.members.every((m, i) => now.members[i]?.key === m.key);
      if (!grown) return;
      this.chain = { ...now, members: [...members, ...now.members.slice(n)] };
    }
  }
}
