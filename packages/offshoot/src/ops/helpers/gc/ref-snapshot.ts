import { hasCode } from '../../../core/errors.js';
import { inBatches } from '../../../core/in-batches.js';
import type { VersionedRef } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';

/** Refs read at once: enough to overlap the store's round trips without flooding its thread pool. */
export const GC_CONCURRENCY = 16;

/** One ref as a pass read it: parsed with its etag, or (malformed) its CORRUPT error and the bytes it had. */
export type SnapshotRef =
  | { db: string; branch: string; got: VersionedRef; corrupt?: undefined }
  | { db: string; branch: string; got?: undefined; corrupt: { message: string; body: Buffer } };

/**
 * Every ref of the store, each read once: what one GC pass's reap, stale-claim clearing and first mark share, so a
 * pass costs one read per ref rather than one per phase. Whatever acts on a ref still does so by compare-and-swap
 * against a fresh read or the etag read here. A ref gone between the listing and its read is left out.
 */
export async function readRefSnapshot(ctx: OpsContext): Promise<SnapshotRef[]> {
  const names = await ctx.store.listAllBranches();
  const read: Array<SnapshotRef | undefined> = new Array(names.length);
  await inBatches(names, GC_CONCURRENCY, async ({ db, branch }, i) => {
    const raw = await ctx.store.rawRef(db, branch);
    if (raw === undefined) return;
    try {
      read[i] = { db, branch, got: { ref: ctx.store.parseBranchRef(db, branch, raw.body), etag: raw.etag } };
    } catch (err) {
      if (!hasCode(err, 'CORRUPT')) throw err;
      read[i] = { db, branch, corrupt: { message: err.message, body: raw.body } };
    }
  });
  return read.filter((r) => r !== undefined);
}
