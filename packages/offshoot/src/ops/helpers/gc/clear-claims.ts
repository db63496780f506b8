import type { OpsContext } from '../context/context.js';
import { readRefSnapshot, type SnapshotRef } from './ref-snapshot.js';

/** A `deleting` claim older than this belongs to a destroy that died; it is cleared so the branch is usable again. */
export const STALE_CLAIM_MS = 30_000;

/**
 * Clears stale `deleting` claims left by destroys that crashed; returns the branches cleared. Each is cleared by
 * compare-and-swap against the etag read, from `refs` (a GC pass's snapshot) when given.
 */
export async function clearStaleClaims(ctx: OpsContext, refs?: readonly SnapshotRef[]): Promise<string[]> {
  const cleared: string[] = [];
  const now = ctx.now().getTime();
  for (const { db, branch, got } of refs ?? (await readRefSnapshot(ctx))) {
    if (!got?.ref.deleting) continue;
    const at = Date.parse(got.ref.deleting_at ?? '');
    if (Number.isFinite(at) && now - at < STALE_CLAIM_MS) continue;
    try {
      await ctx.store.casRef(
        db,
        branch,
        got.etag,
        (() => {
          const next = { ...got.ref };
          delete next.deleting;
          delete next.deleting_at;
          return next;
        })(),
      );
      cleared.push(`${db}@${branch}`);
    } catch {
      // Someone else moved the ref (the destroy finished, or another gc cleared it): nothing to do.
    }
  }
  return cleared;
}
