import { hasCode } from '../../../core/errors.js';
import { versionedRef, type VersionedRef } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';

/** Refs read at once: enough to overlap the store's round trips without flooding its thread pool. */
export const GC_CONCURRENCY = 16;

// Refs asked of the store in one batched read: a bound on what is held at once beyond the parsed refs themselves.
const SNAPSHOT_BATCH = 1024;

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
  const out: SnapshotRef[] = [];
  for (let from = 0; from < names.length; from += SNAPSHOT_BATCH) {
    const batch = names.slice(from, from + SNAPSHOT_BATCH);
    const raws = await ctx.store.rawRefs(batch);
    batch.forEach(({ db, branch }, i) => {
      const raw = raws[i];
      if (raw === undefined) return;
      try {
        out.push({ db, branch, got: versionedRef(ctx.store.parseBranchRef(db, branch, raw.body), raw) });
      } catch (err) {
        if (!hasCode(err, 'CORRUPT')) throw err;
        out.push({ db, branch, corrupt: { message: err.message, body: raw.body } });
      }
    });
  }
  return out;
}
