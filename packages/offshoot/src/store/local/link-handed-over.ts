import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDir, makeDurableDir } from './atomic-write.js';
import { hashHandle } from './file-hash.js';
import { storeError } from './fs-errors.js';
import { linkCreateOnly } from './link-create-only.js';

/** Attempts at a link whose directory a concurrent delete pruned (as openTemp's). */
const LINK_ATTEMPTS = 8;

/**
 * Puts a handed-over file at `file` create-only without copying it: hashed and fsynced where it is, then hard-linked
 * (link() fails with EEXIST if the key exists) and the link made durable, so the object costs no second write of its
 * bytes. Resolves with the etag, or undefined when the file is on another filesystem than the store (device
 * `storeDev`; told by the device before any read or fsync, else by EXDEV), where the caller copies it instead. The
 * file is left at its own name, for the caller to remove. A failure to read the file is its raw fs error (its path
 * the file's); a failure to link it, the store's error for key.
 */
export async function linkHandedOver(
  key: string,
  source: string,
  file: string,
  storeDev: number,
): Promise<string | undefined> {
  // Checked first: a file that must be copied anyway would otherwise be read and fsynced twice.
  if (statSync(source).dev !== storeDev) return undefined;
  const handle = await open(source, 'r');
  let etag: string;
  try {
    etag = await hashHandle(handle);
    // The bytes are durable before any name in the store points at them.
    await handle.sync();
  } finally {
    await handle.close();
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await linkCreateOnly(key, source, file);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EXDEV') return undefined;
      if (code !== 'ENOENT' || attempt >= LINK_ATTEMPTS) throw storeError(err, key, 'write');
      await makeDurableDir(dirname(file));
    }
  }
  await fsyncDir(dirname(file));
  return etag;
}
