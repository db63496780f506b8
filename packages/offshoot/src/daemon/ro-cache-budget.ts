import { rm } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { roCacheEntries, type RoCacheEntry } from '../ops/helpers/ro-cache.js';
import { pageSumsPath } from '../sqlite/page-sums.js';

/** One evicted read-only checkout: which database (and branch, for a named checkpoint) and what it held. */
export interface Eviction {
  db: string;
  branch: string | undefined;
  /** The checkpoint name, or `~by-chain/<id>` for a per-chain cache entry. */
  checkpoint: string;
  bytes: number;
}

/** What one budget pass found and did. */
export interface RoCachePass {
  /** Bytes in use after the pass. */
  bytes: number;
  evicted: Eviction[];
}

function describe(root: string, e: RoCacheEntry): Eviction {
  const rel = relative(join(root, 'checkouts-ro'), e.path).split(sep);
  const db = rel[0] ?? '';
  const file = basename(e.path, '.db');
  if (rel[1] === '~by-chain') return { db, branch: undefined, checkpoint: `~by-chain/${file}`, bytes: e.bytes };
  const at = file.lastIndexOf('@');
  return { db, branch: file.slice(0, at), checkpoint: file.slice(at + 1), bytes: e.bytes };
}

async function evict(e: RoCacheEntry): Promise<void> {
  // The database goes first: a cache reader looks it up before its companions, and treats it missing as a miss.
  await rm(e.path, { force: true });
  await rm(`${e.path}.last-used`, { force: true });
  await rm(pageSumsPath(e.path), { force: true });
  if (basename(dirname(e.path)) === '~by-chain')
    await rm(join(dirname(e.path), `${basename(e.path, '.db')}.json`), { force: true });
}

/**
 * Keeps checkouts-ro/ within budget bytes (0: unlimited) by evicting least-recently-used entries first. Only the
 * read-only cache is walked; writable checkouts are never touched. An evicted path that a caller already holds
 * open keeps working, and asking again re-materializes identical bytes.
 */
export async function enforceRoCacheBudget(checkoutRoot: string, budget: number): Promise<RoCachePass> {
  const entries = await roCacheEntries(checkoutRoot);
  let bytes = entries.reduce((a, e) => a + e.bytes, 0);
  const evicted: Eviction[] = [];
  if (budget <= 0 || bytes <= budget) return { bytes, evicted };
  for (const e of [...entries].sort((a, b) => a.lastUsed - b.lastUsed)) {
    if (bytes <= budget) break;
    await evict(e);
    bytes -= e.bytes;
    evicted.push(describe(checkoutRoot, e));
  }
  return { bytes, evicted };
}
