import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { scratchDir } from '../ops/context.js';

const SESSION_PREFIX = 'session-';

/**
 * The directory that holds every session scratch dir of the checkout root: there, a daemon that dies without
 * cleaning up leaves its scratch where the next daemon on the same store finds it.
 */
export function sessionScratchParent(checkoutRoot: string): string {
  return scratchDir(checkoutRoot, 'sessions');
}

/** Makes a fresh, private (0700, as mkdtemp makes it) scratch dir for one session under the checkout root. */
export async function makeSessionScratch(checkoutRoot: string): Promise<string> {
  const parent = sessionScratchParent(checkoutRoot);
  await mkdir(parent, { recursive: true });
  return mkdtemp(join(parent, SESSION_PREFIX));
}

/**
 * Removes every session scratch dir under the checkout root and returns how many it removed (one that cannot be
 * removed is left for the next start, never a reason not to serve). Only for a caller
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
  const removed = await Promise.all(
    leftovers.map((n) =>
      rm(join(parent, n), { recursive: true, force: true }).then(
        () => true,
        () => false,
      ),
    ),
  );
  return removed.filter(Boolean).length;
}
