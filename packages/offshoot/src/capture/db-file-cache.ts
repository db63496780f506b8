import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fail } from '../core/errors.js';

interface CachedFd {
  fd: number;
  dev: bigint;
  ino: bigint;
}

// POSIX record locks belong to the (process, inode) pair: closing ANY descriptor on a database file drops every
// lock this process's SQLite connections hold on it, and SQLite never notices. So raw readers of a live database
// share one descriptor per file, kept until no file is at its path. A descriptor whose path now names another inode is
// forgotten but deliberately leaked, for the same reason.
const cache = new Map<string, CachedFd>();

/** New descriptors between sweeps for files that no longer exist. */
const SWEEP_EVERY = 32;
let opensSinceSweep = 0;

/**
 * Closes the descriptors of files no longer at their path at all (a destroyed or reaped branch's checkout): nothing
 * can open them again, so no connection's locks there protect anything, while keeping them would leak one
 * descriptor per checkout a long-lived daemon ever captured.
 */
function sweepGone(): void {
  for (const [key, cached] of cache) {
    if (statSync(key, { throwIfNoEntry: false }) !== undefined) continue;
    cache.delete(key);
    closeSync(cached.fd);
  }
}

/**
 * A read-only descriptor on the file currently at path, shared process-wide and closed only once no file is at that
 * path any more. The only sanctioned way to read the main file (or -shm) of a database that SQLite connections in
 * this process may hold open.
 */
export function dbFileFd(path: string): number {
  const key = resolve(path);
  try {
    const now = statSync(key, { bigint: true });
    const hit = cache.get(key);
    if (hit !== undefined && hit.dev === now.dev && hit.ino === now.ino) return hit.fd;
    if (++opensSinceSweep >= SWEEP_EVERY) {
      opensSinceSweep = 0;
      sweepGone();
    }
    const fd = openSync(key, 'r');
    const opened = fstatSync(fd, { bigint: true });
    cache.set(key, { fd, dev: opened.dev, ino: opened.ino });
    return fd;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw fail(code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `cannot open database file ${key}: ${(err as Error).message}`, {
      hint: 'check that the checkout still exists and is readable by the daemon',
      cause: err,
    });
  }
}
