import { link, mkdir, open, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fail } from '../../core/errors.js';
import { TEMP_PREFIX } from './key-path.js';
import { holderIsDeadHere, holderText } from './lock-holder.js';
import { nodeCrypto } from '../../platform/node-crypto.js';

/** How long to wait for a key lock, when to treat one as abandoned, and how often to look again. */
export interface LockTimings {
  timeoutMs: number;
  staleMs: number;
  pollMs: number;
}

/** The reference timings: poll every 2 ms, give up after 5 s, break a lock once it is 30 s old. */
export const DEFAULT_LOCK_TIMINGS: LockTimings = { timeoutMs: 5_000, staleMs: 30_000, pollMs: 2 };

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/**
 * Runs fn while holding the exclusive lock file at lockPath (created by an atomic link); rejects with BUSY
 * (retryable) after timings.timeoutMs. Mutual exclusion holds as long as no holder keeps the lock longer than
 * timings.staleMs; a lock whose holder was a process of this host and pid namespace that is gone is broken at once.
 */
export async function withKeyLock<T>(lockPath: string, timings: LockTimings, fn: () => Promise<T>): Promise<T> {
  const mine = await acquire(lockPath, timings);
  try {
    return await fn();
  } finally {
    await release(lockPath, mine);
  }
}

// Inode numbers are reused as soon as a file is unlinked, so a lock is identified by inode and mtime together.
interface LockIdentity {
  ino: number;
  mtimeMs: number;
}

async function acquire(lockPath: string, timings: LockTimings): Promise<LockIdentity> {
  const deadline = Date.now() + timings.timeoutMs;
  for (;;) {
    const mine = await tryCreate(lockPath);
    if (mine !== undefined) return mine;
    const held = await inspect(lockPath);
    if (held === undefined) continue;
    if (abandoned(held, timings) && (await breakAbandoned(lockPath, timings))) continue;
    if (Date.now() >= deadline) {
      const staleS = Math.round(timings.staleMs / 1000);
      throw fail('BUSY', `timed out after ${timings.timeoutMs} ms waiting for lock ${lockPath}`, {
        retryable: true,
        hint: `retry; if no offshoot process is writing to this store, remove ${lockPath} (a lock left by a dead process of this host is broken at once, any other once ${staleS} s old)`,
      });
    }
    await sleep(timings.pollMs);
  }
}

/** A lock is abandoned once it is older than staleMs, or at once when its holder was a process of this host that is gone. */
function abandoned(held: HeldLock, timings: LockTimings): boolean {
  return Date.now() - held.mtimeMs > timings.staleMs || holderIsDeadHere(held.holder);
}

/**
 * Removes the lock at lockPath if it is still abandoned. Waiters judge and remove it one at a time, under a breaker
 * lock beside it: a waiter acting on what it saw a moment ago could otherwise remove the fresh lock of the writer
 * that broke the old one first. Returns false when another waiter is breaking it, leaving the caller to poll.
 */
async function breakAbandoned(lockPath: string, timings: LockTimings): Promise<boolean> {
  const breaker = breakerPath(lockPath);
  const mine = await tryCreate(breaker);
  if (mine === undefined) {
    await clearDeadBreaker(breaker, timings);
    return false;
  }
  try {
    // Under the breaker no other waiter removes the lock, but a holder past staleMs may still be alive, release it
    // and a newcomer take it between this look and the removal: so the file is taken aside and checked first.
    const held = await inspect(lockPath);
    if (held !== undefined && abandoned(held, timings)) await removeIfSame(lockPath, held);
  } finally {
    await release(breaker, mine);
  }
  return true;
}

/**
 * Removes the file at path if it is still the one identified by seen: it is renamed aside (so of several callers
 * one takes it) and linked back when what was taken is another file. The gap before that link is the one race
 * left, and only a holder outliving the stale time, or a breaker dying mid-way, opens it.
 */
async function removeIfSame(path: string, seen: LockIdentity): Promise<void> {
  const aside = join(dirname(path), `${TEMP_PREFIX}broken-lock-${nodeCrypto().randomBytes(8).toString('hex')}`);
  try {
    await rename(path, aside);
  } catch (err) {
    if (code(err) === 'ENOENT') return;
    throw err;
  }
  try {
    const taken = await stat(aside);
    if (taken.ino !== seen.ino || taken.mtimeMs !== seen.mtimeMs) {
      await link(aside, path).catch((err: unknown) => {
        if (code(err) !== 'EEXIST') throw err;
      });
    }
  } finally {
    await unlink(aside);
  }
}

/** The breaker lock of a key lock: hidden from listings, and named by a hash so any key's fits in a file name. */
function breakerPath(lockPath: string): string {
  const id = nodeCrypto().createHash('sha256').update(basename(lockPath)).digest('hex').slice(0, 16);
  return join(dirname(lockPath), `${TEMP_PREFIX}lock-breaker-${id}`);
}

/** Removes a breaker lock left by a breaker that died during its brief work; the breaker has no breaker of its own. */
async function clearDeadBreaker(breaker: string, timings: LockTimings): Promise<void> {
  const held = await inspect(breaker);
  if (held !== undefined && abandoned(held, timings)) await removeIfSame(breaker, held);
}

/** A lock file as found: its identity and the holder it names. */
interface HeldLock extends LockIdentity {
  holder: string;
}

// A holder line is `pid@host:pidns`; anything longer than this is not one.
const HOLDER_MAX_BYTES = 512;

/** Reads the lock file's holder and identity from one open file, or undefined when it has just gone. */
async function inspect(lockPath: string): Promise<HeldLock | undefined> {
  let handle;
  try {
    handle = await open(lockPath, 'r');
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const buf = Buffer.alloc(HOLDER_MAX_BYTES);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    // Stat after reading: a holder line read complete was written before this mtime was taken.
    const { ino, mtimeMs } = await handle.stat();
    return { ino, mtimeMs, holder: buf.subarray(0, bytesRead).toString('utf8') };
  } finally {
    await handle.close();
  }
}

/**
 * Creates the lock file, or returns undefined when someone else holds it. The holder line is written to a private
 * file first and hard-linked into place (link fails if the name exists, atomically): a writer killed at any point
 * never leaves an empty lock, which nobody could tell from a live one's and only the age rule would break.
 */
async function tryCreate(lockPath: string): Promise<LockIdentity | undefined> {
  const tmp = join(dirname(lockPath), `${TEMP_PREFIX}lock-${nodeCrypto().randomBytes(8).toString('hex')}`);
  try {
    await writeFile(tmp, holderText(), { flag: 'wx' });
  } catch (err) {
    if (code(err) !== 'ENOENT') throw err;
    // The directory was pruned by a concurrent delete (or never existed): create it and try once more.
    await mkdir(dirname(lockPath), { recursive: true });
    return tryCreate(lockPath);
  }
  try {
    const { ino, mtimeMs } = await stat(tmp);
    await link(tmp, lockPath);
    return { ino, mtimeMs };
  } catch (err) {
    if (code(err) === 'EEXIST') return undefined;
    throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function release(lockPath: string, mine: LockIdentity): Promise<void> {
  // Our lock may have been broken as stale (we held it past staleMs) and re-taken by another writer:
  // only remove the file if it is still the one we created.
  const now = await stat(lockPath).catch((err: unknown) => {
    if (code(err) === 'ENOENT') return undefined;
    throw err;
  });
  if (now !== undefined && now.ino === mine.ino && now.mtimeMs === mine.mtimeMs) await unlink(lockPath);
}
