import { fstatSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fail } from '../core/errors.js';
import { openFailure } from './open-failure.js';
import { closeRawFile, openRawFile } from '../sqlite/raw-file.js';

interface CachedFd {
  fd: number;
  dev: bigint;
  ino: bigint;
}

// Raw readers of a live database share one descriptor per file, kept until releaseDbFiles: a capture reads the
// main file and -shm on every poll. A descriptor whose path now names another inode is retired beside it. Their
// closes wait for the process's last connection on the database (see raw-file).
const cache = new Map<string, CachedFd>();
const retired = new Map<string, number[]>();

/**
 * A read-only descriptor on the file currently at path (a database's main file or -shm), shared process-wide and
 * kept until releaseDbFiles.
 */
export function dbFileFd(path: string): number {
  const key = resolve(path);
  try {
    const now = statSync(key, { bigint: true });
    const hit = cache.get(key);
    if (hit !== undefined && hit.dev === now.dev && hit.ino === now.ino) return hit.fd;
    const fd = openRawFile(key, 'r', key.endsWith('-shm') ? key.slice(0, -'-shm'.length) : key);
    const opened = fstatSync(fd, { bigint: true });
    if (hit !== undefined) retired.set(key, [...(retired.get(key) ?? []), hit.fd]);
    cache.set(key, { fd, dev: opened.dev, ino: opened.ino });
    return fd;
  } catch (err) {
    throw openFailure(err, `cannot open database file ${key}`);
  }
}

/**
 * Closes the shared descriptors of a database (its main file and -shm, and any retired ones): by the owner of its
 * connections in this process once it has closed them (a session at close or eviction); each close waits for any
 * connection of this process still open on the database.
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
        closeRawFile(fd);
      } catch (err) {
        throw fail('IO', `cannot close ${key}: ${(err as Error).message}`, { cause: err });
      }
    }
  }
}
