import { closeSync, fstatSync, openSync, statSync, type OpenMode } from 'node:fs';
import { withFileRoom } from '../platform/file-room.js';

// POSIX record locks belong to the (process, inode) pair: closing ANY descriptor on a database file drops every lock
// this process's SQLite connections hold on it, and SQLite never notices. SQLite's unix VFS defers closing its own
// descriptors while a lock is held on the inode; this does the same for ours. Every SQLite connection the engine
// opens counts itself on its file's inode (openDatabase), and a raw descriptor on a database file (or its -shm) is
// closed only once none is left there.

interface OnInode {
  connections: number;
  deferred: number[];
}

const inodes = new Map<string, OnInode>();
// Each raw descriptor opened here, to the inode whose connections its close must not disturb.
const guarded = new Map<number, string>();

function inodeKey(st: { dev: bigint; ino: bigint }): string {
  return `${st.dev}:${st.ino}`;
}

/**
 * Counts a SQLite connection of this process as open on the file at path (just opened there); the returned function
 * counts it closed, closing the raw descriptors deferred on the file when it was the last.
 */
export function connectionOpened(path: string): () => void {
  let key: string;
  try {
    key = inodeKey(statSync(path, { bigint: true }));
  } catch {
    return () => undefined;
  }
  const on = inodes.get(key) ?? { connections: 0, deferred: [] };
  inodes.set(key, on);
  on.connections++;
  let counted = true;
  return () => {
    if (!counted) return;
    counted = false;
    if (--on.connections > 0) return;
    inodes.delete(key);
    for (const fd of on.deferred) closeSync(fd);
  };
}

/**
 * Opens a raw descriptor on a database file (or on a companion of database, its -shm); close it with closeRawFile
 * only, never closeSync.
 */
export function openRawFile(path: string, flags: OpenMode = 'r', database: string = path): number {
  const fd = withFileRoom(() => openSync(path, flags));
  try {
    const st = database === path ? fstatSync(fd, { bigint: true }) : statSync(database, { bigint: true });
    guarded.set(fd, inodeKey(st));
  } catch {
    // The database is gone from its path: there is no inode of it to wait on.
  }
  return fd;
}

/** Closes a descriptor from openRawFile now, or once the last SQLite connection of this process on its file closes. */
export function closeRawFile(fd: number): void {
  const key = guarded.get(fd);
  guarded.delete(fd);
  const on = key === undefined ? undefined : inodes.get(key);
  if (on === undefined) closeSync(fd);
  else on.deferred.push(fd);
}
