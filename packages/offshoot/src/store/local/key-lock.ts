import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { link, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fail } from '../../core/errors.js';
import { TEMP_PREFIX } from './key-path.js';

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
 * Runs fn while holding the O_CREAT|O_EXCL lock file at lockPath; rejects with BUSY (retryable) after
 * timings.timeoutMs. Mutual exclusion holds as long as no holder keeps the lock longer than timings.staleMs.
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
    const held = await stat(lockPath).catch((err: unknown) => {
      if (code(err) === 'ENOENT') return undefined;
      throw err;
    });
    if (held === undefined) continue;
    if (Date.now() - held.mtimeMs > timings.staleMs) {
      await breakStale(lockPath, timings.staleMs);
      continue;
    }
    if (Date.now() >= deadline) {
      const staleS = Math.round(timings.staleMs / 1000);
      throw fail('BUSY', `timed out after ${timings.timeoutMs} ms waiting for lock ${lockPath}`, {
        retryable: true,
        hint: `retry; if no offshoot process is writing to this store, remove ${lockPath} (it is broken once ${staleS} s old)`,
      });
    }
    await sleep(timings.pollMs);
  }
}

/** Creates the lock file, or returns undefined when someone else holds it. */
async function tryCreate(lockPath: string): Promise<LockIdentity | undefined> {
  let handle;
  try {
    handle = await open(lockPath, 'wx');
  } catch (err) {
    if (code(err) === 'EEXIST') return undefined;
    if (code(err) !== 'ENOENT') throw err;
    // The directory was pruned by a concurrent delete (or never existed): create it and try once more.
    await mkdir(dirname(lockPath), { recursive: true });
    return tryCreate(lockPath);
  }
  try {
    // Who holds it, for whoever finds the file in the way.
    await handle.writeFile(`${hostname()}/${process.pid}\n`);
    const { ino, mtimeMs } = await handle.stat();
    await handle.close();
    return { ino, mtimeMs };
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(lockPath).catch(() => undefined);
    throw err;
  }
}

/**
 * Removes an abandoned lock. It is first renamed aside so that of several waiters only one takes it; if the
 * file taken turns out to be fresh (another waiter broke the stale one and a writer re-locked in between),
 * it is linked back so its holder keeps it.
 */
async function breakStale(lockPath: string, staleMs: number): Promise<void> {
  const aside = join(dirname(lockPath), `${TEMP_PREFIX}stale-lock-${randomBytes(8).toString('hex')}`);
  try {
    await rename(lockPath, aside);
  } catch (err) {
    if (code(err) === 'ENOENT') return;
    throw err;
  }
  try {
    if (Date.now() - (await stat(aside)).mtimeMs <= staleMs) {
      await link(aside, lockPath).catch((err: unknown) => {
        if (code(err) !== 'EEXIST') throw err;
      });
    }
  } finally {
    await unlink(aside);
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
