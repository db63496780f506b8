import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SCRATCH_DIR } from '../ops/temp-dir.js';

// Under the checkout root, so a daemon that dies without cleaning up leaves its scratch where the next daemon on
// the same store finds it; the leading '.' keeps it apart from anything named after a database.
const SESSIONS_DIR = [SCRATCH_DIR, 'sessions'];
const SESSION_PREFIX = 'session-';

/** The directory that holds every session scratch dir of the checkout root. */
export function sessionScratchParent(checkoutRoot: string): string {
  return join(checkoutRoot, ...SESSIONS_DIR);
}

/** Makes a fresh, private scratch dir for one session under the checkout root. */
export async function makeSessionScratch(checkoutRoot: string): Promise<string> {
  const parent = sessionScratchParent(checkoutRoot);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  return mkdtemp(join(parent, SESSION_PREFIX));
}

/**
 * Removes every session scratch dir under the checkout root and returns how many there were. Only for a caller
 * that knows no session is open on this root: the daemon, once it holds the store's one-daemon lock.
 */
export async function sweepSessionScratch(checkoutRoot: string): Promise<number> {
  const parent = sessionScratchParent(checkoutRoot);
  let names: string[];
  try {
    names = await readdir(parent);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const leftovers = names.filter((n) => n.startsWith(SESSION_PREFIX));
  await Promise.all(leftovers.map((n) => rm(join(parent, n), { recursive: true, force: true })));
  return leftovers.length;
}
