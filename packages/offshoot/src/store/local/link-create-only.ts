import { link, lstat } from 'node:fs/promises';
import { fail } from '../../core/errors.js';

/**
 * Hard-links a written temp file to file, create-only: link() fails with EEXIST if the key exists, atomically and
 * without the key's lock. ALREADY_EXISTS when an object is there; a directory at the key (a key/prefix collision) is
 * rethrown as the raw EEXIST for storeError to report.
 */
export async function linkCreateOnly(key: string, tmpPath: string, file: string): Promise<void> {
  try {
    await link(tmpPath, file);
  } catch (err) {
    const collides = async () => (await lstat(file).catch(() => undefined))?.isDirectory() === true;
    if ((err as NodeJS.ErrnoException).code === 'EEXIST' && !(await collides())) {
      throw fail('ALREADY_EXISTS', `object ${key} already exists`, {
        hint: 'create-only writes never replace an object; pick a new key or read the existing one',
      });
    }
    throw err;
  }
}
