import { type Fingerprint, stillFingerprinted } from '../../../sqlite/checkout-sidecar.js';
import type { ResolvedChain } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';
import { cachedChain, entryPathOf } from './materialize.js';

/** A sealed cache entry as a diff needs it: its file and its size in pages. */
export interface KeptEntry {
  path: string;
  commit: number;
}

/**
 * Entries kept at once: a long-lived process diffs many forks against a few seeds, so a few suffice; the least
 * recently used is forgotten past this.
 */
const MAX_ENTRIES = 16;

const kept = new Map<string, { entry: KeptEntry; fingerprint: Fingerprint }>();
let reads = 0;

/**
 * The sealed per-chain cache entry of a chain (cachedChain, built if missing), remembered in this process by its path
 * and the fingerprint (size, mtime, inode) it was sealed with: a later diff of the same chain finds it with one stat
 * instead of reading its record and page sums, and an entry removed or replaced on disk since is read anew.
 */
export async function keptEntry(ctx: OpsContext, db: string, chain: ResolvedChain): Promise<KeptEntry> {
  const path = entryPathOf(ctx, db, chain);
  const hit = kept.get(path);
  if (hit !== undefined) {
    kept.delete(path);
    if (stillFingerprinted(path, hit.fingerprint)) {
      kept.set(path, hit);
      return hit.entry;
    }
  }
  reads++;
  const e = await cachedChain(ctx, db, chain);
  const entry = { path: e.path, commit: e.result.commit };
  kept.set(e.path, { entry, fingerprint: e.fingerprint });
  for (const old of kept.keys()) {
    if (kept.size <= MAX_ENTRIES) break;
    kept.delete(old);
  }
  return entry;
}

/** How many times diffs in this process have read a cache entry rather than finding it kept. */
export function keptEntryReads(): number {
  return reads;
}
