import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fail } from '../core/errors.js';
import { openFailure } from './open-failure.js';
import { withFileRoom } from '../platform/file-room.js';

interface CachedFd {
  fd: number;
  dev: bigint;
  ino: bigint;
}

// POSIX record locks belong to the (process, inode) pair: closing ANY descriptor on a database file drops every
// lock this process's SQLite connections hold on it, and SQLite never notices. So raw readers of a live database
// share one descriptor per file, closed only by releaseDbFiles once no connection of this process has the file
// open. A descriptor whose path now names another inode is retired beside it, for the same reason.
const cache = new Map<string, CachedFd>();
const retired = new Map<string, number[]>();

/**
 * A read-only descriptor on the file currently at path, shared process-wide and kept until releaseDbFiles. The only
 * sanctioned way to read the main file (or -shm) of a database that SQLite connections in this process may hold open.
 */
export function dbFileFd(path: string): number {
  const key = resolve(path);
  try {
    const now = statSync(key, { bigint: true });
    const hit = cache.get(key);
    if (hit !== undefined && hit.dev === now.dev && hit.ino === now.ino) return hit.fd;
    const fd = withFileRoom(() => openSync(key, 'r'));
    const opened = fstatSync(fd, { bigint: true });
    if (hit !== undefined) retired.set(key, [...(retired.get(key) ?? []), hit.fd]);
    cache.set(key, { fd, dev: opened.dev, ino: opened.ino });
    return fd;
  } catch (err) {
    throw openFailure(err, `cannot open database file ${key}`);
  }
}

/**
 * Closes the shared descriptors of a database (its main file and -shm, and any retired ones). Only for the owner of
 * the database's every connection in this process, once it has closed them all (a session at close or eviction):
 * called earlier, it would silently drop the locks those connections hold.
 */
export function releaseDbFiles(dbPath: string): void {
  for (const path of [dbPath, `${dbPath}-shm`]) {
    const key = resolve(path);
    const fds = [...(retired.get(key) ?? [])];
    const hit = cache.get(key);
    if (hit !== undefined) fds.push(hit.fd);
    cache.delete(key);
    retired.delete(key);
    for (const fd of fds) {
      try {
        closeSync(fd);
      } catch (err) {
        throw fail('IO', `cannot close ${key}: ${(err as Error).message}`, { cause: err });
      }
    }
  }
}
