import { closeSync, fstatSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import type { Connection } from './connection.js';

/** How long a checkout's connection is kept unused before it is closed. */
const KEPT_IDLE_MS = 2000;

/**
 * A checkout's connection kept open between uses, with the raw descriptor opened after it: POSIX locks belong to the
 * (process, inode) pair, so closing any descriptor on the file would drop the connection's locks. closeFd closes
 * that descriptor (or gives back a shared one) once the connection is closed.
 */
export interface KeptConnection {
  db: Connection;
  fd: number;
  closeFd: () => void;
}

interface Entry extends KeptConnection {
  timer: NodeJS.Timeout;
}

const kept = new Map<string, Entry>();
let keepers = 0;

/**
 * Has this process keep a checkout's connection between its users (the re-stamp at a session's close, the diffs
 * that read the checkout in place) for KEPT_IDLE_MS after its last use, until the returned stop is called for the
 * checkouts under root (each caller keeps its own). Only a long-lived process does (the daemon, from its start to
 * its stop): a command that exits would leave the -wal and -shm that a last connection's close removes.
 */
export function keepConnections(root: string): () => void {
  keepers++;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    keepers--;
    const under = resolve(root) + sep;
    for (const key of [...kept.keys()]) if (keepers === 0 || key.startsWith(under)) dropKept(key);
  };
}

/**
 * Takes the kept connection of the checkout at path, if any and if it is still on the file at path (a file replaced
 * by another process under it is closed, never read): the caller owns it until it puts it back or closes it.
 */
export function takeKept(path: string): KeptConnection | undefined {
  const key = resolve(path);
  const e = kept.get(key);
  if (e === undefined) return undefined;
  kept.delete(key);
  clearTimeout(e.timer);
  if (!onFileAt(e.fd, key)) {
    closeKept(e);
    return undefined;
  }
  return { db: e.db, fd: e.fd, closeFd: e.closeFd };
}

/**
 * Keeps a checkout's connection, idle (no transaction open), for the next user of path, or closes it (false) while
 * this process keeps none, when one is kept already, or when the file at path is no longer the one it is open on.
 */
export function putKept(path: string, conn: KeptConnection): boolean {
  const key = resolve(path);
  if (keepers === 0 || kept.has(key) || conn.db.inTransaction || !onFileAt(conn.fd, key)) {
    closeKept(conn);
    return false;
  }
  const timer = setTimeout(() => dropKept(key), KEPT_IDLE_MS);
  timer.unref();
  kept.set(key, { ...conn, timer });
  return true;
}

/**
 * Closes the kept connection of the checkout at path, if any: done before anything in this process takes the file
 * alone, checkpoints it for removal, replaces or removes it (quiesce, holdAlone, refuseWriter, a placed checkout).
 */
export function dropKept(path: string): void {
  const key = resolve(path);
  const e = kept.get(key);
  if (e === undefined) return;
  kept.delete(key);
  clearTimeout(e.timer);
  closeKept(e);
}

function onFileAt(fd: number, path: string): boolean {
  try {
    const held = fstatSync(fd, { bigint: true });
    const now = statSync(path, { bigint: true });
    return held.ino === now.ino && held.dev === now.dev && held.nlink > 0n;
  } catch {
    return false;
  }
}

/**
 * Closes a kept connection taken with takeKept: the connection first, then its descriptor (the other way round, the
 * descriptor would drop the connection's locks).
 */
export function closeKept(conn: KeptConnection): void {
  try {
    if (conn.db.inTransaction) conn.db.exec('ROLLBACK');
    conn.db.close();
  } finally {
    conn.closeFd();
  }
}

/** Closes a raw descriptor a kept connection owns alone. */
export function ownFd(fd: number): () => void {
  return () => closeSync(fd);
}
