import { closeSync, fstatSync, openSync, statSync, type OpenMode } from 'node:fs';
import { withFileRoom } from '../platform/file-room.js';

// POSIX record locks belong to the (process, inode) pair: closing ANY descriptor on a database file drops every lock
// this process's SQLite connections hold on it, and SQLite never notices. SQLite's unix VFS defers closing its own
// descriptors while a lock is held on the inode, and opens the file again through one of them; this does the same
// for ours. Every SQLite connection the engine opens counts itself on its file's inode (openDatabase), and a raw
// descriptor on a database file (or its -shm) is closed only once none is left there.

// A raw descriptor: the inode of the file it is on, and of the database whose connections its close must not disturb.
interface Raw {
  file: string;
  guard: string;
  flags: OpenMode;
}

interface OnInode {
  connections: number;
  deferred: Array<Raw & { fd: number }>;
}

const inodes = new Map<string, OnInode>();
const guarded = new Map<number, Raw>();

function inodeKey(st: { dev: bigint; ino: bigint }): string {
  return `${st.dev}:${st.ino}`;
}

/**
 * Counts a SQLite connection of this process as open on the file at path (just opened there); the returned function
 * counts it closed, closing the raw descriptors deferred on the file when it was the last.
 */
export function connectionOpened(path: string): () => void {
  const key = inodeAt(path);
  if (key === undefined) return () => undefined;
  const on = inodes.get(key) ?? { connections: 0, deferred: [] };
  inodes.set(key, on);
  on.connections++;
  let counted = true;
  return () => {
    if (!counted) return;
    counted = false;
    if (--on.connections > 0) return;
    inodes.delete(key);
    for (const d of on.deferred) closeSync(d.fd);
  };
}

/**
 * Opens a raw descriptor on a database file (or on a companion of database, its -shm), or takes one deferred on that
 * same file (so read it at explicit positions only); close it with closeRawFile only, never closeSync.
 */
export function openRawFile(path: string, flags: OpenMode = 'r', database: string = path): number {
  const own = inodeAt(path);
  const guard = database === path ? own : inodeAt(database);
  const on = guard === undefined ? undefined : inodes.get(guard);
  const i = on?.deferred.findIndex((d) => d.file === own && d.flags === flags) ?? -1;
  const reused = i < 0 ? undefined : on?.deferred.splice(i, 1)[0];
  if (reused !== undefined) {
    const { fd, ...raw } = reused;
    guarded.set(fd, raw);
    return fd;
  }
  const fd = withFileRoom(() => openSync(path, flags));
  // The descriptor's own inode, should the path have been replaced since the stat.
  const file = inodeKey(fstatSync(fd, { bigint: true }));
  const by = database === path ? file : guard;
  if (by !== undefined) guarded.set(fd, { file, guard: by, flags });
  return fd;
}

/** Closes a descriptor from openRawFile now, or once the last SQLite connection of this process on its file closes. */
export function closeRawFile(fd: number): void {
  const raw = guarded.get(fd);
  guarded.delete(fd);
  const on = raw === undefined ? undefined : inodes.get(raw.guard);
  if (raw === undefined || on === undefined) closeSync(fd);
  else on.deferred.push({ ...raw, fd });
}

// The inode at path, or undefined when nothing is there (the database is gone from its path: nothing to wait on).
function inodeAt(path: string): string | undefined {
  try {
    return inodeKey(statSync(path, { bigint: true }));
  } catch {
    return undefined;
  }
}
