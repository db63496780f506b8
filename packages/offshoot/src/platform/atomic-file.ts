import { close, fsync, open } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { nodeCrypto } from './node-crypto.js';

const openP = promisify(open);
const fsyncP = promisify(fsync);
const closeP = promisify(close);

/** A temp path beside `path` (same directory, so a rename is atomic), hidden by its `.tmp-` prefix. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.tmp-${basename(path)}-${nodeCrypto().randomBytes(6).toString('hex')}`);
}

/** fsyncs a file or directory by path. */
export async function fsyncPath(path: string): Promise<void> {
  const fd = await openP(path, 'r');
  try {
    await fsyncP(fd);
  } finally {
    await closeP(fd);
  }
}

/** Renames tmp over path and fsyncs the directory, so the new name survives a crash. */
export async function commitRename(tmp: string, path: string): Promise<void> {
  await rename(tmp, path);
  await fsyncPath(dirname(path));
}

/** Writes data to path atomically: temp file → fsync → rename → fsync the directory. */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  opts: { mode?: number } = {},
): Promise<void> {
  await writeVia(path, data, opts.mode, true);
}

/**
 * Replaces path with data atomically (temp file → rename) but not durably: no fsync, so after a power loss the path
 * may hold an earlier version, nothing, or an empty file. Only for files whose every such state is safe to read:
 * caches of a proof that is re-checked (a checkout's sidecars) and state nobody reads after a crash.
 */
export async function replaceFile(
  path: string,
  data: Uint8Array | string,
  opts: { mode?: number } = {},
): Promise<void> {
  await writeVia(path, data, opts.mode, false);
}

// A temp file beside path renamed over it, with the file and its directory fsynced when durable.
async function writeVia(path: string, data: Uint8Array | string, mode: number | undefined, durable: boolean) {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    await writeFile(tmp, data, { mode: mode ?? 0o644 });
    if (durable) {
      await fsyncPath(tmp);
      await commitRename(tmp, path);
    } else await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
