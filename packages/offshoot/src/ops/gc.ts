import { durationMs, type Duration } from '../core/duration.js';
import { LOG_PREFIX } from '../core/keys.js';
import { readTombstones, writeTombstones, type Tombstones } from '../store/tombstones.js';
import { clearStaleClaims } from './helpers/gc/clear-claims.js';
import type { OpsContext } from './helpers/context/context.js';
import { withGcLease, type GcLease } from './helpers/gc/gc-lease.js';
import { keeps, type Mark, markLive } from './helpers/gc/gc-mark.js';
import { pruneChainCache, pruneNamedCheckouts } from './helpers/checkout/ro-cache.js';
import { type PostponedReap, reapExpired, type ReapReport } from './helpers/gc/reap-expired.js';
import { readRefSnapshot, type SnapshotRef } from './helpers/gc/ref-snapshot.js';

// Steps of gc a long-running host also takes on its own cadence, and the storage the dashboard shows.
export { clearStaleClaims } from './helpers/gc/clear-claims.js';
export { storageUsage } from './helpers/gc/storage-usage.js';

/** What one object-GC pass did. */
export interface CollectReport {
  tombstoned: number;
  deleted: number;
  /** Stones still waiting out their grace period after this pass. */
  backlog: number;
  /** The errors of refs that could not be read (each names its branch); what they may reach was kept. */
  unreadable: string[];
  /** Temp files and incomplete uploads removed, left by writers that died (see TEMPORARY_MIN_AGE_MS). */
  temporaries: number;
}

/**
 * The youngest a temp file or an incomplete multipart upload can be and still count as abandoned, whatever the grace:
 * a live writer renames its temp file moments after its last write, and an S3 call has 15 minutes plus its transfer
 * time before it gives up, so nothing this old is still on its way into place.
 */
export const TEMPORARY_MIN_AGE_MS = 60 * 60_000;

/** What `offshoot gc` did: reap, stale-claim clearing, object GC, then read-only cache pruning. */
export interface GcReport extends CollectReport {
  reaped: string[];
  /** Expired branches left for now, because their checkout still holds work (see reapExpired). */
  postponed: PostponedReap[];
  reapErrors: string[];
  clearedClaims: string[];
  /** Read-only cache entries removed: per-chain ones no live chain uses, named checkouts of vanished checkpoints. */
  roCachePruned: number;
}

/**
 * Two-phase, object-granular GC: objects no live chain reaches are tombstoned; a stone older than the grace period
 * is re-marked against a fresh mark and re-listed, and only then deleted (batched). Revived objects lose their
 * stone. Fails closed: any error before the deletes deletes nothing, and a malformed ref keeps every lineage it
 * mentions (or, naming none, every object). One pass runs store-wide at a time, under the `gc/lease`
 * compare-and-swap lease (BUSY while another daemon's or command's pass holds it).
 */
export async function collectGarbage(ctx: OpsContext, grace: Duration): Promise<CollectReport> {
  return withGcLease(ctx, async (lease) => {
    const keys = await listObjects(ctx);
    return (await collectLeased(ctx, grace, lease, keys, await readRefSnapshot(ctx))).report;
  });
}

// Listed before the refs are read: an object written after the ref reads (a create or fork whose ref is not there
// yet) is not in this listing, so it is never condemned by a mark that could not see its ref.
async function listObjects(ctx: OpsContext): Promise<string[]> {
  const [data, log] = await Promise.all([ctx.store.backend.listKeys('data/'), ctx.store.backend.listKeys(LOG_PREFIX)]);
  return [...data, ...log];
}

// The sweep over `keys` (listed before `refs` were read), marking from that snapshot; the deletes wait on a second,
// fresh mark.
async function collectLeased(
  ctx: OpsContext,
  grace: Duration,
  lease: GcLease,
  keys: readonly string[],
  refs: readonly SnapshotRef[],
): Promise<{ report: CollectReport; mark: Mark }> {
  const backend = ctx.store.backend;
  const now = ctx.now();
  const first = await markLive(ctx, refs);
  const { stones, etag } = await readTombstones(backend);
  const next: Tombstones = { ...stones };
  let tombstoned = 0;
  for (const k of keys) {
    if (keeps(first, k)) delete next[k];
    else if (next[k] === undefined) {
      next[k] = now.toISOString();
      tombstoned++;
    }
  }
  const graceMs = durationMs(grace);
  const due = Object.keys(stones).filter(
    (k) => next[k] !== undefined && now.getTime() - Date.parse(stones[k] ?? '') >= graceMs,
  );
  let deleted = 0;
  if (due.length > 0) {
    // The safety net: every ref read again and data/ listed again, whatever the snapshot said.
    const second = await markLive(ctx);
    const present = second.present;
    const doomed = due.filter((k) => !keeps(second, k) && present.has(k));
    for (const k of due) if (keeps(second, k)) delete next[k];
    await lease.renew();
    await backend.deleteMany(doomed);
    deleted = doomed.length;
    for (const k of doomed) delete next[k];
    for (const k of Object.keys(next)) if (!present.has(k)) delete next[k];
  }
  const changed = JSON.stringify(next) !== JSON.stringify(stones);
  if (changed) await writeTombstones(backend, next, etag);
  const temporaries = await ctx.store.sweepAbandoned(new Date(now.getTime() - Math.max(graceMs, TEMPORARY_MIN_AGE_MS)));
  return {
    report: { tombstoned, deleted, backlog: Object.keys(next).length, unreadable: first.unreadable, temporaries },
    mark: first,
  };
}

/**
 * `offshoot gc [--grace d]`: reap expired TTLs, clear stale delete claims, collect unreachable objects, then drop
 * the per-chain read-only cache entries no live chain uses and the named read-only checkouts of checkpoints no
 * branch has any more (by the same complete mark). The whole pass holds the GC lease and reads every ref once:
 * reap, claim clearing and the first mark share that snapshot (less the branches the reap destroyed).
 */
export async function runGc(ctx: OpsContext, opts: { grace: Duration }): Promise<GcReport> {
  const { r, clearedClaims, c } = await withGcLease(ctx, async (lease) => {
    const keys = await listObjects(ctx);
    const refs = await readRefSnapshot(ctx);
    const r: ReapReport = await reapExpired(ctx, refs);
    const clearedClaims = await clearStaleClaims(ctx, refs);
    await lease.renew();
    const gone = new Set(r.reaped);
    const left = refs.filter((x) => !gone.has(`${x.db}@${x.branch}`));
    return { r, clearedClaims, c: await collectLeased(ctx, opts.grace, lease, keys, left) };
  });
  // A ref that could not be read may still hold checkpoints whose named checkouts are wanted: keep them all then.
  const named = c.mark.unreadable.length > 0 ? 0 : await pruneNamedCheckouts(ctx.checkoutRoot, c.mark.checkpoints);
  const roCachePruned = (await pruneChainCache(ctx.checkoutRoot, c.mark.chainIds)) + named;
  return {
    reaped: r.reaped,
    postponed: r.postponed,
    reapErrors: r.errors,
    clearedClaims,
    ...c.report,
    roCachePruned,
  };
}
