import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

// Apart from eviction (ro-cache.ts), which loads the LTX stack: status reports usage without it.

/** One database file in the read-only cache (a checkpoint checkout or a per-chain entry). */
export interface RoCacheEntry {
  path: string;
  bytes: number;
  /** Last use: the `.last-used` marker's mtime, else the file's. */
  lastUsed: number;
}

async function walk(dir: string, out: RoCacheEntry[]): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const p = join(dir, name);
    const st = await stat(p).catch(() => undefined);
    if (!st) continue;
    if (st.isDirectory()) await walk(p, out);
    else if (name.endsWith('.db')) {
      const marker = await stat(`${p}.last-used`).catch(() => undefined);
      out.push({ path: p, bytes: st.size, lastUsed: (marker ?? st).mtimeMs });
    }
  }
}

/** Every database file under checkouts-ro/, for usage reporting and LRU eviction. */
export async function roCacheEntries(checkoutRoot: string): Promise<RoCacheEntry[]> {
  const out: RoCacheEntry[] = [];
  await walk(join(checkoutRoot, 'checkouts-ro'), out);
  return out;
}
