import type { OpsContext } from '../../ops/helpers/context/context.js';

/** The facts a question to the human names about one branch. */
export interface BranchFacts {
  txid: number;
  etag: string;
  protected: boolean;
  /** Checkpoint name → txid. */
  checkpoints: Record<string, number>;
  /** The branch this one is the undo point of, when it is one. */
  undoPointOf: string | undefined;
}

/** Reads what a confirmation names about db@branch, or undefined when it does not exist. */
export async function readHead(ctx: OpsContext, db: string, branch: string): Promise<BranchFacts | undefined> {
  const got = await ctx.store.tryGetRef(db, branch);
  if (got === undefined) return undefined;
  const { ref, etag } = got;
  return {
    txid: ref.head_txid,
    etag,
    protected: ref.protected === true,
    checkpoints: Object.fromEntries(Object.entries(ref.checkpoints).map(([n, c]) => [n, c.txid])),
    undoPointOf: ref.meta?.['offshoot.safety'] !== undefined ? ref.meta['offshoot.of'] : undefined,
  };
}

/**
 * What to say about the branch's checkout after a repoint: nothing when it was refreshed, that there is none when no
 * checkout existed, and the reason (busy) only when one existed and could not be refreshed.
 */
export function refreshNote(
  db: string,
  branch: string,
  r: { path: string; refreshed: boolean; refreshError?: Error },
): string | undefined {
  if (r.refreshed) return undefined;
  if (r.refreshError === undefined)
    return `${db}@${branch} has no checkout yet; offshoot_checkout makes one at the new head`;
  return `the checkout of ${db}@${branch} was busy and not refreshed (${r.refreshError.message}); check it out again`;
}
