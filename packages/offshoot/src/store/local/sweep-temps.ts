import { lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { keySegmentOf, TEMP_PREFIX } from './key-path.js';

// Read on the main thread a slice at a time, as a key-only listing is (tree-walk.ts).
const DIRS_PER_TURN = 64;

const gone = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/**
 * Removes the `.tmp-*` files under dir (recursively, or only dir's own with `deep` false) last modified before
 * `before`, and the directories below dir they leave empty (an orphan lineage folder a killed fork left holding only
 * its temp files) or found empty and unchanged since `before`. A writer is done with its temp file moments after its last write (an fsync, then the rename
 * or link), so one that old is abandoned; a directory pruned under a writer is made again by it, as after a delete
 * (prune-empty-dirs.ts). Returns how many files were removed.
 */
export async function sweepTemps(dir: string, before: Date, deep: boolean): Promise<number> {
  const cutoff = before.getTime();
  let removed = 0;
  const pending = [dir];
  for (let n = 1; pending.length > 0; n++) {
    const at = pending.pop() as string;
    let entries;
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch (err) {
      if (gone(err)) continue;
      throw err;
    }
    let left = entries.length;
    let removedHere = 0;
    for (const e of entries) {
      const path = join(at, e.name);
      if (e.isDirectory()) {
        // A directory is a key segment; a hidden one is none of ours.
        if (deep && keySegmentOf(e.name) !== undefined) pending.push(path);
      } else if (e.isFile() && e.name.startsWith(TEMP_PREFIX)) {
        try {
          if (lstatSync(path).mtimeMs >= cutoff) continue;
          unlinkSync(path);
          removed++;
          removedHere++;
          left--;
        } catch (err) {
          if (!gone(err)) throw err;
        }
      }
    }
    // An empty directory is pruned only when it held nothing but abandoned temp files, or is as old as they are: a
    // writer makes its directory first and its temp file in it next, and Node's recursive mkdir fails (ENOENT) when a
    // directory it just made is removed before it makes the next one down.
    if (left === 0 && (removedHere > 0 || olderThan(at, cutoff))) pruneUpTo(dir, at);
    if (n % DIRS_PER_TURN === 0) await nextTurn();
  }
  return removed;
}

function olderThan(path: string, cutoff: number): boolean {
  try {
    return lstatSync(path).mtimeMs < cutoff;
  } catch {
    return false;
  }
}

/** Removes `from` and each parent it leaves empty, up to but not including `top`; stops at the first that is not. */
function pruneUpTo(top: string, from: string): void {
  for (let d = from; d !== top && d.startsWith(`${top}/`); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
  }
}
