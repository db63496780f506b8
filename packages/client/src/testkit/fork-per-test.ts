import { sanitizeName } from '../branch-name.js';
import { connect, type Client } from '../client.js';
import { isOffshootError, OffshootError } from '../errors.js';
import type { FlushOptions } from '../session.js';
import type { WireOrigin } from '../types.js';
import { seededHandle, type SeedHandle } from './seed-once.js';
import type { DaemonRef } from './start-daemon.js';

/** Options of `forkPerTest`. */
export interface ForkPerTestOptions {
  /** Goes into the branch name (sanitized), e.g. the test's title; default the seed's name. */
  name?: string;
  /** The fork's TTL, so a crashed run's branches are reaped; default `1h`. */
  ttl?: string;
  /** Who asks, for the branch log: `{ surface: 'sdk:<adapter>/<framework>', meta }` (default `sdk:typescript`). */
  origin?: WireOrigin;
  /**
   * An ephemeral fork (the default): held by the daemon and never written to the store, as fits a fork the test
   * throws away. False makes a durable one, for a fork kept to be inspected after the run.
   */
  ephemeral?: boolean;
}

/** A private branch for one test, with a live session on it. */
export interface TestFork {
  /** The writable checkout to open with any SQLite driver. */
  path: string;
  db: string;
  branch: string;
  /** The fork's own connection, for anything else the test needs. */
  client: Client;
  /** Flushes the session (optionally as a named checkpoint, with meta); returns the txid. */
  flush(name?: string, opts?: FlushOptions): Promise<number>;
  /** Closes the session and destroys the branch; never throws (problems are logged with console.warn). */
  close(): Promise<void>;
}

/** The earlier testkit's name for a test's fork. */
export type ForkedSession = TestFork;

const MAX_WORKER = 20;
const forkCounters = new WeakMap<DaemonRef, number>();

function workerId(): string {
  const raw = process.env['VITEST_POOL_ID'] ?? process.env['JEST_WORKER_ID'] ?? 'local';
  return (
    raw
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, MAX_WORKER) || 'w'
  );
}

function nextFork(daemon: DaemonRef): number {
  const n = forkCounters.get(daemon) ?? 0;
  forkCounters.set(daemon, n + 1);
  return n;
}

async function resolveSeed(daemon: DaemonRef, seed: SeedHandle | string): Promise<SeedHandle> {
  if (typeof seed !== 'string') return seed;
  return (await seededHandle(daemon, seed)) ?? { db: `eval-${seed}`, checkpoint: 'seed', name: seed };
}

function withStderr(daemon: DaemonRef, err: unknown): unknown {
  const tail = daemon.stderrTail?.() ?? '';
  if (!isOffshootError(err) || tail === '') return err;
  return new OffshootError(err.code, `${err.message}\n--- offshoot daemon stderr tail ---\n${tail}`, {
    ...(err.hint === undefined ? {} : { hint: err.hint }),
    retryable: err.retryable,
    cause: err,
  });
}

/**
 * Starts an episode on a fresh `t-<worker>-<hint>-<n>` forked from the seed, moving on to the next n when another
 * process took that one.
 */
async function episodeFresh(
  client: Client,
  daemon: DaemonRef,
  handle: SeedHandle,
  hint: string,
  opts: { ttl: string; ephemeral: boolean },
) {
  for (;;) {
    const name = `t-${workerId()}-${sanitizeName(hint)}-${nextFork(daemon)}`;
    try {
      return await client.episode(handle.db, { fromCheckpoint: handle.checkpoint, name, ...opts });
    } catch (err) {
      if (!isOffshootError(err, 'ALREADY_EXISTS')) throw err;
    }
  }
}

/**
 * Forks the seed checkpoint into a fresh branch `t-<worker>-<name>-<n>` and opens a session on it, one connection per
 * fork. `seed` is a handle from `seedOnce` or a seed name. The fork is an episode (`Client.episode`): ephemeral unless
 * asked otherwise, held by the daemon and never written to the store, since the test throws it away.
 */
export async function forkPerTest(
  daemon: DaemonRef,
  seed: SeedHandle | string,
  opts: ForkPerTestOptions = {},
): Promise<TestFork> {
  const handle = await resolveSeed(daemon, seed);
  const client = await connect(daemon.sock, opts.origin === undefined ? {} : { origin: opts.origin }).catch(
    (err: unknown) => {
      throw withStderr(daemon, err);
    },
  );
  try {
    const ep = await episodeFresh(client, daemon, handle, opts.name ?? handle.name, {
      ttl: opts.ttl ?? '1h',
      ephemeral: opts.ephemeral ?? true,
    });
    const branch = ep.branch;
    let closing: Promise<void> | undefined;
    return {
      path: ep.path,
      db: handle.db,
      branch,
      client,
      flush: (name?: string, flushOpts?: FlushOptions) => ep.flush(name, flushOpts),
      close: () =>
        (closing ??= (async () => {
          const r = await ep
            .close()
            .catch((err: unknown) => console.warn(`offshoot testkit: closing ${handle.db}@${branch}: ${String(err)}`));
          // A test that named a flush kept its fork, and a close that failed may have left it: it goes all the same.
          if (r === undefined || r.kept !== undefined)
            await client
              .destroy(handle.db, branch, { force: true })
              .catch((err: unknown) =>
                console.warn(`offshoot testkit: destroying ${handle.db}@${branch}: ${String(err)}`),
              );
          await client.close();
        })()),
    };
  } catch (err) {
    await client.close();
    throw withStderr(daemon, err);
  }
}
