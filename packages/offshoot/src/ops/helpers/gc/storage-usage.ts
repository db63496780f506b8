import { mayBeTornFork } from '../branch/torn-fork.js';
import { baseKey, parseDataKey } from '../../../core/keys.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';
import { keeps, markLive } from './gc-mark.js';
import { readRefSnapshot } from './ref-snapshot.js';

/** Bytes of one lineage's objects, and how many of them some branch still reaches. */
export interface LineageUsage {
  lineage: string;
  /** Databases whose branches read through this lineage (empty: nothing does any more). */
  dbs: string[];
  objects: number;
  bytes: number;
  liveBytes: number;
}

/** What one branch pins: every object its head and checkpoints resolve through, and the part only it pins. */
export interface BranchUsage {
  db: string;
  branch: string;
  pinnedObjects: number;
  pinnedBytes: number;
  /** Bytes no other branch pins: what destroying this branch would let GC reclaim. */
  uniqueBytes: number;
}

/** Store-wide storage: per database, per lineage, per branch, and what GC would reclaim now (grace aside). */
export interface StorageUsage {
  totalBytes: number;
  dbs: Array<{ db: string; branches: number; bytes: number }>;
  lineages: LineageUsage[];
  branches: BranchUsage[];
  reclaimable: { objects: number; bytes: number };
}

// Base pointers are read this many at a time before the mark walks the spines one branch after another.
const BASE_READS = 32;

// Reads (into the resolver's cache) the base pointer of every lineage the listing shows one for. A malformed one
// fails here only if the mark reaches it, exactly as when read on demand.
async function prefetchBases(resolver: ChainResolver, listed: ReadonlyArray<{ key: string }>): Promise<void> {
  const lineages = listed.flatMap((o) => /^data\/([^/]+)\/base\.json$/.exec(o.key)?.[1] ?? []);
  for (let i = 0; i < lineages.length; i += BASE_READS)
    await Promise.all(lineages.slice(i, i + BASE_READS).map((l) => resolver.base(l).catch(() => undefined)));
}

/**
 * Measures storage from listings and refs alone (no object is read): chains are resolved by the read path's
 * resolver, and "reclaimable" is what GC's own mark would not keep.
 */
export async function storageUsage(ctx: OpsContext): Promise<StorageUsage> {
  // One read of each ref, one listing after them and one read of each base pointer serve both the mark and the
  // per-branch sums: the report costs O(branches + objects) store calls, not a listing per lineage per pass.
  const refs = await readRefSnapshot(ctx);
  const listed = await ctx.store.backend.list('data/');
  const size = new Map(listed.map((o) => [o.key, o.size ?? 0]));
  const resolver = ChainResolver.fromListing(ctx.store, listed);
  await prefetchBases(resolver, listed);
  const mark = await markLive(ctx, refs, { listing: listed, resolver });
  const pinnedBy = new Map<string, number>();
  const lineageDbs = new Map<string, Set<string>>();
  const dbCounts = new Map<string, number>();
  const branchKeys: Array<{ db: string; branch: string; keys: Set<string> }> = [];
  const withObjects = new Set(listed.map((o) => o.key.slice('data/'.length, o.key.indexOf('/', 'data/'.length))));
  for (const { db, branch, got } of refs) {
    if (got === undefined) continue;
    const r = got.ref;
    dbCounts.set(db, (dbCounts.get(db) ?? 0) + 1);
    const keys = new Set<string>();
    // A torn fork (its lineage holds nothing, not even its base.json) resolves no chain and pins nothing.
    if (mayBeTornFork(r) && !withObjects.has(r.lineage)) {
      branchKeys.push({ db, branch, keys });
      continue;
    }
    for (const txid of new Set([r.head_txid, ...Object.values(r.checkpoints).map((c) => c.txid)])) {
      const chain = await resolver.resolve(r.lineage, txid);
      for (const m of chain.members) keys.add(m.key);
      for (const lin of chain.spine) {
        let s = lineageDbs.get(lin);
        if (!s) lineageDbs.set(lin, (s = new Set()));
        s.add(db);
      }
    }
    for (const k of keys) pinnedBy.set(k, (pinnedBy.get(k) ?? 0) + 1);
    branchKeys.push({ db, branch, keys });
  }
  const lineages = new Map<string, LineageUsage>();
  let reclaimObjects = 0;
  let reclaimBytes = 0;
  for (const o of listed) {
    const d = parseDataKey(o.key);
    const lin = d?.lineage ?? /^data\/([^/]+)\//.exec(o.key)?.[1];
    const bytes = o.size ?? 0;
    const kept = keeps(mark, o.key);
    if (!kept) {
      reclaimObjects++;
      reclaimBytes += bytes;
    }
    if (lin === undefined || o.key === baseKey(lin)) continue;
    let u = lineages.get(lin);
    if (!u) {
      u = { lineage: lin, dbs: [...(lineageDbs.get(lin) ?? [])].sort(), objects: 0, bytes: 0, liveBytes: 0 };
      lineages.set(lin, u);
    }
    u.objects++;
    u.bytes += bytes;
    if (kept) u.liveBytes += bytes;
  }
  const dbBytes = new Map<string, Set<string>>();
  const branches: BranchUsage[] = branchKeys.map(({ db, branch, keys }) => {
    let all = dbBytes.get(db);
    if (!all) dbBytes.set(db, (all = new Set()));
    let pinnedBytes = 0;
    let uniqueBytes = 0;
    for (const k of keys) {
      all.add(k);
      const b = size.get(k) ?? 0;
      pinnedBytes += b;
      if (pinnedBy.get(k) === 1) uniqueBytes += b;
    }
    return { db, branch, pinnedObjects: keys.size, pinnedBytes, uniqueBytes };
  });
  const sum = (keys: Iterable<string>): number => {
    let n = 0;
    for (const k of keys) n += size.get(k) ?? 0;
    return n;
  };
  return {
    totalBytes: sum(size.keys()),
    dbs: [...dbCounts.entries()]
      .map(([db, n]) => ({ db, branches: n, bytes: sum(dbBytes.get(db) ?? []) }))
      .sort((a, b) => a.db.localeCompare(b.db)),
    lineages: [...lineages.values()].sort((a, b) => b.bytes - a.bytes || a.lineage.localeCompare(b.lineage)),
    branches,
    reclaimable: { objects: reclaimObjects, bytes: reclaimBytes },
  };
}
