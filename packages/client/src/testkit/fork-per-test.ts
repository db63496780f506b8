import { connect, type Client } from '../client.js';
import { seededHandle, type SeedHandle } from './seed-once.js';
import type { TestDaemon } from './start-daemon.js';

/** Options of `forkPerTest`. */
export interface ForkPerTestOptions {
  /** Goes into the branch name (sanitized), e.g. the test's title. */
  name?: string;
  /** The fork's TTL, so a crashed run's branches are reaped; default `1h`. */
  ttl?: string;
}

/** A private branch for one test, with a live session on it. */
export interface TestFork {
  /** The writable checkout to open with any SQLite driver. */
  path: string;
  db: string;
  branch: string;
  /** The fork's own connection, for anything else the test needs. */
  client: Client;
  /** Flushes the session (optionally as a named checkpoint); returns the txid. */
  flush(name?: string): Promise<number>;
  /** Closes the session and destroys the branch; never throws (problems are logged with console.warn). */
  close(): Promise<void>;
}

let forks = 0;

function workerId(): string {
  return process.env['VITEST_POOL_ID'] ?? process.env['JEST_WORKER_ID'] ?? `p${process.pid}`;
}

function sanitize(name: string): string {
  const s = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return s === '' ? 'test' : s;
}

async function resolveSeed(daemon: TestDaemon, seed: SeedHandle | string): Promise<SeedHandle> {
  if (typeof seed !== 'string') return seed;
  return (await seededHandle(daemon, seed)) ?? { db: `eval-${seed}`, checkpoint: 'seed', name: seed };
}

/**
 * Forks the seed checkpoint into a fresh branch `t-<worker>-<name>-<n>` and opens a session on it, one connection per
 * fork. `seed` is a handle from `seedOnce` or a seed name.
 */
export async function forkPerTest(
  daemon: TestDaemon,
  seed: SeedHandle | string,
  opts: ForkPerTestOptions = {},
): Promise<TestFork> {
  const handle = await resolveSeed(daemon, seed);
  const branch = `t-${workerId()}-${sanitize(opts.name ?? 'test')}-${++forks}`;
  const client = await connect(daemon.sock);
  try {
    await client.fork(handle.db, 'main', branch, { from: handle.checkpoint, ttl: opts.ttl ?? '1h' });
    const session = await client.open(handle.db, branch);
    let closing: Promise<void> | undefined;
    return {
      path: session.path,
      db: handle.db,
      branch,
      client,
      flush: (name?: string) => session.flush(name),
      close: () =>
        (closing ??= (async () => {
          await session
            .close()
            .catch((err: unknown) => console.warn(`offshoot testkit: closing ${handle.db}@${branch}: ${String(err)}`));
          await client
            .destroy(handle.db, branch, { force: true })
            .catch((err: unknown) =>
              console.warn(`offshoot testkit: destroying ${handle.db}@${branch}: ${String(err)}`),
            );
          client.close();
        })()),
    };
  } catch (err) {
    client.close();
    throw err;
  }
}
