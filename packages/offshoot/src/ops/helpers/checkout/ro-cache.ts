import { rm } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { pageSumsPath } from '../../../sqlite/page-sums.js';
import { discardEntry } from '../chain/materialize.js';
import { type RoCacheEntry, roCacheEntries } from './ro-cache-entries.js';

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

function inChainCache(path: string): boolean {
  return basename(dirname(path)) === '~by-chain';
}

async function evict(e: RoCacheEntry): Promise<void> {
  if (inChainCache(e.path)) return discardEntry(e.path);
  // The database goes first: a cache reader looks it up before its companions, and treats it missing as a miss.
  await rm(e.path, { force: true });
  await rm(`${e.path}.last-used`, { force: true });
  await rm(`${e.path}.id`, { force: true });
  await rm(pageSumsPath(e.path), { force: true });
}

/**
 * Keeps checkouts-ro/ within budget bytes (0: unlimited) by evicting least-recently-used entries first. Only the
 * read-only cache is walked; writable checkouts are never touched. An evicted path that a caller already holds
 * open keeps working, and asking again re-materializes identical bytes. With chainOnly, only per-chain entries are
 * evicted (the read-only checkpoint checkouts a command printed stay), though every file counts toward the budget.
 */
export async function enforceRoCacheBudget(
  checkoutRoot: string,
  budget: number,
  opts: { chainOnly?: boolean } = {},
): Promise<RoCachePass> {
  const entries = await roCacheEntries(checkoutRoot);
  let bytes = entries.reduce((a, e) => a + e.bytes, 0);
  const evicted: Eviction[] = [];
  if (budget <= 0 || bytes <= budget) return { bytes, evicted };
  for (const e of [...entries].sort((a, b) => a.lastUsed - b.lastUsed)) {
    if (bytes <= budget) break;
    if (opts.chainOnly && !inChainCache(e.path)) continue;
    await evict(e);
    bytes -= e.bytes;
    evicted.push(describe(checkoutRoot, e));
  }
  return { bytes, evicted };
}

/**
 * Removes every per-chain cache entry whose id is not in `live` (the ids of every prefix of every live chain, from
 * a complete GC mark): its chain belongs to no branch head or checkpoint any more. Returns how many went.
 */
export async function pruneChainCache(checkoutRoot: string, live: ReadonlySet<string>): Promise<number> {
  let pruned = 0;
  for (const e of await roCacheEntries(checkoutRoot)) {
    if (!inChainCache(e.path) || live.has(basename(e.path, '.db'))) continue;
    await discardEntry(e.path);
    pruned++;
  }
  return pruned;
}

/**
 * Removes every named read-only checkout (`<branch>@<checkpoint>.db`) whose checkpoint no readable ref has any more
 * (`wanted` holds `db@branch@checkpoint` from a complete GC mark): its branch was destroyed or rolled back past it.
 * Returns how many went.
 */
export async function pruneNamedCheckouts(checkoutRoot: string, wanted: ReadonlySet<string>): Promise<number> {
  let pruned = 0;
  for (const e of await roCacheEntries(checkoutRoot)) {
    if (inChainCache(e.path)) continue;
    const d = describe(checkoutRoot, e);
    if (d.branch === undefined || wanted.has(`${d.db}@${d.branch}@${d.checkpoint}`)) continue;
    await evict(e);
    pruned++;
  }
  return pruned;
}
