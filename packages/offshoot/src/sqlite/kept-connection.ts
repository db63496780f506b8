import { fstatSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { onFilesExhausted } from '../platform/file-room.js';
import type { Connection } from './connection.js';
import { closeRawFile } from './raw-file.js';

/** How long a checkout's connection is kept unused before it is closed. */
const KEPT_IDLE_MS = 2000;

/**
 * A checkout's connection kept open between uses, with a raw descriptor on its file for page reads (from openRawFile,
 * whose close waits for the process's last connection on the file). closeFd closes that descriptor (or gives back a
 * shared one) once the connection is closed.
 */
export interface KeptConnection {
  db: Connection;
  fd: number;
  closeFd: () => void;
}

interface Entry extends KeptConnection {
  timer: NodeJS.Timeout;
}

/** A process's keeping of the connections of the checkouts under one root (see keepConnections). */
interface Keeper {
  under: string;
  room: () => number;
}

// In the order they were kept (a Map iterates in insertion order): the first is the least recently kept.
const kept = new Map<string, Entry>();
const keepers = new Set<Keeper>();
// Registered while any keeper is: an open failing for want of a descriptor closes every kept connection.
let unregister: (() => void) | undefined;

/** The keeping of checkouts' connections under one root, as keepConnections returns it. */
export interface KeptConnections {
  /** Closes the least recently kept connections under the root until no more are kept than room allows now. */
  trim(): void;
  /** Stops keeping connections under the root, closing those kept. */
  stop(): void;
}

/**
 * Has this process keep a checkout's connection between its users (the re-stamp at a session's close, the diffs
 * that read the checkout in place) for KEPT_IDLE_MS after its last use, until stop is called, for the checkouts under
 * root. room says how many may be kept there at once now (the daemon's spare places in its -max-open budget): past
 * it, the least recently kept is closed first. Only a long-lived process does (the daemon, from its start to its
 * stop): a command that exits would leave the -wal and -shm that a last connection's close removes. An open that
 * fails for want of a descriptor anywhere in the process closes every kept connection and is tried once more.
 */
export function keepConnections(root: string, room: () => number): KeptConnections {
  const keeper: Keeper = { under: resolve(root) + sep, room };
  keepers.add(keeper);
  unregister ??= onFilesExhausted(dropAllKept);
  let stopped = false;
  return {
    trim: () => trimKept(keeper, 0),
    stop: () => {
      if (stopped) return;
      stopped = true;
      keepers.delete(keeper);
      if (keepers.size === 0) {
        unregister?.();
        unregister = undefined;
      }
      for (const key of [...kept.keys()]) if (keepers.size === 0 || key.startsWith(keeper.under)) dropKept(key);
    },
  };
}

/** Closes every kept connection; how many it closed. */
function dropAllKept(): number {
  const keys = [...kept.keys()];
  for (const key of keys) dropKept(key);
  return keys.length;
}

function keeperOf(key: string): Keeper | undefined {
  for (const k of keepers) if (key.startsWith(k.under)) return k;
  return undefined;
}

// Closes the least recently kept under keeper's root until `more` others fit beside those left within its room.
function trimKept(keeper: Keeper, more: number): void {
  const mine = [...kept.keys()].filter((key) => key.startsWith(keeper.under));
  const excess = mine.length + more - Math.max(0, keeper.room());
  for (const key of mine.slice(0, Math.max(0, excess))) dropKept(key);
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
 * Keeps a checkout's connection, idle (no transaction open), for the next user of path, closing the least recently
 * kept first when there is no room for it beside them; or closes it (false) while this process keeps none under
 * path's root or has no room at all, when one is kept already, or when the file at path is no longer the one it is
 * open on.
 */
export function putKept(path: string, conn: KeptConnection): boolean {
  const key = resolve(path);
  const keeper = keeperOf(key);
  if (keeper === undefined || keeper.room() < 1 || kept.has(key) || conn.db.inTransaction || !onFileAt(conn.fd, key)) {
    closeKept(conn);
    return false;
  }
  trimKept(keeper, 1);
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

/** Closes a kept connection taken with takeKept: the connection first, so that its descriptor is closed at once. */
export function closeKept(conn: KeptConnection): void {
  try {
    if (conn.db.inTransaction) conn.db.exec('ROLLBACK');
    conn.db.close();
  } finally {
    conn.closeFd();
  }
}

/** Closes a raw descriptor (from openRawFile) a kept connection owns alone. */
export function ownFd(fd: number): () => void {
  return () => closeRawFile(fd);
}
