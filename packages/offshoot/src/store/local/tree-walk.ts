import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isHiddenName, segmentOfFileName } from './key-path.js';

/** A regular file found under the store root, named by its key. */
export interface WalkedFile {
  key: string;
  size: number;
}

const vanished = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/**
 * Every object file under dir (recursively) with its key relative to root, skipping lock and temp files.
 * Entries removed while the walk runs are skipped rather than failing the listing.
 */
export async function walkObjects(root: string, dir: string): Promise<WalkedFile[]> {
  const rel = relative(root, dir);
  const segs = rel === '' ? [] : rel.split(sep).map(segmentOfFileName);
  if (segs.some((s) => s === undefined)) return [];
  const keyBase = segs.map((s) => `${s}/`).join('');
  const out: WalkedFile[] = [];
  await walk(dir, keyBase, out);
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
    entries
      .filter((e) => !isHiddenName(e.name))
      .map(async (e) => {
        // A name the backend never makes (a stray `%...` file) is no object.
        const seg = segmentOfFileName(e.name);
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
