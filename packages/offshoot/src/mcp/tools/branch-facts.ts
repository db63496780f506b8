import type { OpsContext } from '../../ops/context.js';
import { undoPointOfProtected, undoTag } from '../../ops/policy.js';

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
    undoPointOf: undoTag(ref.meta)?.of,
  };
}

/**
 * The sentence a question adds when the branch it changes is part of a protected branch's way back (its undo point,
 * or an undo point of one), saying what the change does to it; empty otherwise.
 */
export async function wayBackNote(ctx: OpsContext, db: string, branch: string): Promise<string> {
  const got = await ctx.store.tryGetRef(db, branch);
  const u = got === undefined ? undefined : await undoPointOfProtected(ctx, db, branch, got.ref);
  if (u === undefined) return '';
  const of =
    u.of === u.root ? `protected ${db}@${u.root}` : `${db}@${u.of}, on the way back of protected ${db}@${u.root}`;
  return ` ${db}@${branch} is the undo point of ${of}: undoing the last rollback or promote of ${db}@${u.of} would then give it this branch's new content.`;
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
