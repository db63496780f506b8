import { readdirSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { keySegmentOf, segmentOfFileName } from './key-path.js';

/** A regular file found under the store root, named by its key. */
export interface WalkedFile {
  key: string;
  size: number;
}

// A key-only walk reads this many directories on the main thread between turns of the event loop: a readdir through
// the thread pool costs a pool round trip, which on a loaded machine is most of its cost, and a slice this size
// keeps a daemon's other requests waiting at most a few milliseconds.
const DIRS_PER_TURN = 64;

const vanished = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

// The key prefix of dir under root, or undefined when a segment of it is a name the backend never makes.
function keyBaseOf(root: string, dir: string): string | undefined {
  const rel = relative(root, dir);
  const segs = rel === '' ? [] : rel.split(sep).map(segmentOfFileName);
  if (segs.some((s) => s === undefined)) return undefined;
  return segs.map((s) => `${s}/`).join('');
}

/**
 * Every object file under dir (recursively) with its key relative to root, skipping lock and temp files.
 * Entries removed while the walk runs are skipped rather than failing the listing.
 */
export async function walkObjects(root: string, dir: string): Promise<WalkedFile[]> {
  const keyBase = keyBaseOf(root, dir);
  if (keyBase === undefined) return [];
  const out: WalkedFile[] = [];
  await walk(dir, keyBase, out);
  return out;
}

/**
 * The keys walkObjects would find, without a stat per file; read synchronously, a slice of directories per turn.
 * `onDir` is called with each directory just before it is read.
 */
export async function walkKeys(root: string, dir: string, onDir?: (dir: string) => void): Promise<string[]> {
  const keyBase = keyBaseOf(root, dir);
  if (keyBase === undefined) return [];
  const out: string[] = [];
  const pending: Array<{ dir: string; keyBase: string }> = [{ dir, keyBase }];
  for (let n = 1; pending.length > 0; n++) {
    const at = pending.pop() as { dir: string; keyBase: string };
    let entries;
    onDir?.(at.dir);
    try {
      entries = readdirSync(at.dir, { withFileTypes: true });
    } catch (err) {
      if (vanished(err)) continue;
      throw err;
    }
    for (const e of entries) {
      const seg = keySegmentOf(e.name);
      if (seg === undefined) continue;
      if (e.isDirectory()) pending.push({ dir: join(at.dir, e.name), keyBase: `${at.keyBase}${seg}/` });
      else if (e.isFile()) out.push(at.keyBase + seg);
    }
    if (n % DIRS_PER_TURN === 0) await nextTurn();
  }
  return out;
}

async function walk(dir: string, keyBase: string, out: WalkedFile[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (vanished(err)) return;
    throw err;
  }
  await Promise.all(
    entries.map(async (e) => {
      // Bookkeeping, or a name the backend never makes (a stray `%...` file), is no object.
      const seg = keySegmentOf(e.name);
      if (seg === undefined) return;
      const path = join(dir, e.name);
      if (e.isDirectory()) return walk(path, `${keyBase}${seg}/`, out);
      if (!e.isFile()) return;
      try {
        out.push({ key: keyBase + seg, size: (await stat(path)).size });
      } catch (err) {
        if (!vanished(err)) throw err;
      }
    }),
  );
}
