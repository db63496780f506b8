import { fsyncPath } from '../../platform/atomic-file.js';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Body } from '../backend.js';
import { forEachChunk, writeAll } from './file-chunks.js';
import { TEMP_PREFIX } from './key-path.js';
import { nodeCrypto } from '../../platform/node-crypto.js';

/** A freshly created, still-open temp file. */
export interface TempFile {
  path: string;
  handle: FileHandle;
}

/** A temp file written in full and fsynced, ready to be renamed or linked into place. */
export interface WrittenTemp {
  path: string;
  etag: string;
}

/**
 * Creates an empty `.tmp-*` file in dir, creating dir (again) when it is missing; with makeDir false a missing dir
 * rejects with ENOENT instead.
 */
export async function openTemp(dir: string, makeDir = true): Promise<TempFile> {
  // A concurrent delete may prune the directory between our mkdir and open, so a missing dir is retried;
  // once the temp file exists the directory is non-empty and can no longer be pruned under us.
  for (let attempt = 0; ; attempt++) {
    const path = join(dir, TEMP_PREFIX + nodeCrypto().randomBytes(8).toString('hex'));
    try {
      return { path, handle: await open(path, 'wx') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !makeDir || attempt >= 8) throw err;
      await makeDurableDir(dir);
    }
  }
}

/** How often a directory is made again after a concurrent prune: each try costs a few syscalls and no waiting. */
const MKDIR_ATTEMPTS = 100;

/**
 * Creates dir and any missing parents, each new entry made durable in its parent (a no-op when dir exists). A
 * concurrent prune of an emptied parent (a delete, the sweep of abandoned temp files) makes Node's recursive mkdir
 * fail with ENOENT: it is tried again, and the entries of every directory made since it began are then synced.
 */
export async function makeDurableDir(dir: string): Promise<void> {
  const began = Date.now();
  for (let attempt = 0; ; attempt++) {
    let top: string | undefined;
    try {
      top = await mkdir(dir, { recursive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= MKDIR_ATTEMPTS) throw err;
      continue;
    }
    if (attempt > 0) await syncDirsMadeSince(dir, began);
    else if (top !== undefined) await syncNewDirs(dir, top);
    return;
  }
}

/** After a retried mkdir: syncs the entry of dir and of each parent born since `since` (what any attempt made). */
async function syncDirsMadeSince(dir: string, since: number): Promise<void> {
  for (let d = dir; dirname(d) !== d; d = dirname(d)) {
    await fsyncDir(dirname(d));
    const born = await stat(d).then(
      (st) => st.birthtimeMs,
      () => Number.POSITIVE_INFINITY,
    );
    if (born < since - 1000) return;
  }
}

/**
 * Makes the entries of the directories mkdir just made (top down to dir) durable in their parents: the commit fsyncs
 * only dir itself, and an object in a directory whose own entry a crash can drop is an object lost.
 */
async function syncNewDirs(dir: string, top: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    await fsyncDir(dirname(d));
    if (d === top || dirname(d) === d) return;
  }
}

/** Writes body to a new temp file in dir and fsyncs it; large file bodies are streamed, never held whole. */
export async function writeTemp(dir: string, body: Body): Promise<WrittenTemp> {
  const { path, handle } = await openTemp(dir);
  try {
    const hash = nodeCrypto().createHash('sha256');
    if (body instanceof Uint8Array) {
      await handle.writeFile(body);
      hash.update(body);
    } else {
      const source = await open(body.file, 'r');
      try {
        await forEachChunk(
          source,
          async (chunk) => {
            hash.update(chunk);
            await writeAll(handle, chunk);
          },
          { sequential: true },
        );
      } finally {
        await source.close();
      }
    }
    await handle.sync();
    await handle.close();
    return { path, etag: hash.digest('hex') };
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(path, { force: true });
    throw err;
  }
}

/** Makes renames, links and unlinks inside dir durable. */
export async function fsyncDir(dir: string): Promise<void> {
  try {
    await fsyncPath(dir);
  } catch (err) {
    // A concurrent delete removed the entry we made and pruned the emptied directory: nothing is left to flush.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
