import { durationMs, type Duration } from '../core/duration.js';
import { readTombstones, writeTombstones, type Tombstones } from '../store/tombstones.js';
import { clearStaleClaims } from './helpers/gc/clear-claims.js';
import type { OpsContext } from './helpers/context/context.js';
import { withGcLease, type GcLease } from './helpers/gc/gc-lease.js';
import { keeps, type Mark, markLive } from './helpers/gc/gc-mark.js';
import { pruneChainCache, pruneNamedCheckouts } from './helpers/checkout/ro-cache.js';
import { reapExpired } from './helpers/gc/reap-expired.js';

/** What one object-GC pass did. */
export interface CollectReport {
  tombstoned: number;
  deleted: number;
  /** Stones still waiting out their grace period after this pass. */
  backlog: number;
  /** The errors of refs that could not be read (each names its branch); what they may reach was kept. */
  unreadable: string[];
}

/** What `offshoot gc` did: reap, stale-claim clearing, object GC, then read-only cache pruning. */
export interface GcReport extends CollectReport {
  reaped: string[];
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
  return (await collectWithMark(ctx, grace)).report;
}

function collectWithMark(ctx: OpsContext, grace: Duration): Promise<{ report: CollectReport; mark: Mark }> {
  return withGcLease(ctx, (lease) => collectLeased(ctx, grace, lease));
}

async function collectLeased(
  ctx: OpsContext,
  grace: Duration,
  lease: GcLease,
): Promise<{ report: CollectReport; mark: Mark }> {
  const backend = ctx.store.backend;
  const now = ctx.now();
  // Listed before the mark: an object written after the ref reads (a create or fork whose ref is not there yet) is
  // not in this listing, so it is never condemned by a mark that could not see its ref.
  const keys = (await backend.list('data/')).map((o) => o.key);
  const first = await markLive(ctx);
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
    const second = await markLive(ctx);
    const present = new Set((await backend.list('data/')).map((o) => o.key));
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
  return {
    report: { tombstoned, deleted, backlog: Object.keys(next).length, unreadable: first.unreadable },
    mark: first,
  };
}

/**
 * `offshoot gc [--grace d]`: reap expired TTLs, clear stale delete claims, collect unreachable objects, then drop
 * the per-chain read-only cache entries no live chain uses and the named read-only checkouts of checkpoints no
 * branch has any more (by the same complete mark).
 */
export async function runGc(ctx: OpsContext, opts: { grace: Duration }): Promise<GcReport> {
  const r = await reapExpired(ctx);
  const clearedClaims = await clearStaleClaims(ctx);
  const c = await collectWithMark(ctx, opts.grace);
  // A ref that could not be read may still hold checkpoints whose named checkouts are wanted: keep them all then.
  const named = c.mark.unreadable.length > 0 ? 0 : await pruneNamedCheckouts(ctx.checkoutRoot, c.mark.checkpoints);
  const roCachePruned = (await pruneChainCache(ctx.checkoutRoot, c.mark.chainIds)) + named;
  return { reaped: r.reaped, reapErrors: r.errors, clearedClaims, ...c.report, roCachePruned };
}
