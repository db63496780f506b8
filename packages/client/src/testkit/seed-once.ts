import { connect, type Client } from '../client.js';
import { isOffshootError, OffshootError } from '../errors.js';
import { inTransaction, seedFingerprint, seedSql, type Seed } from './seed-sql.js';
import { runSql } from './sqlite-cli.js';
import type { DaemonRef } from './start-daemon.js';

/** Options of `seedOnce`. */
export interface SeedOnceOptions {
  /** Names the seed; the database is `eval-<name>`. Default `default`. */
  name?: string;
  seed: Seed;
}

/** A seeded database: fork tests from `checkpoint` (always `seed` from `seedOnce`) on its `main`. */
export interface SeedHandle {
  readonly db: string;
  readonly checkpoint: string;
  readonly name: string;
}

interface Memo {
  fingerprint: unknown;
  promise: Promise<SeedHandle>;
}

const memos = new WeakMap<DaemonRef, Map<string, Memo>>();

/** How long to wait for another process that is seeding the same database on a shared daemon. */
const FOREIGN_SEED_WAIT_MS = 120_000;

/** The memoized seeding of `name` on `daemon`, if one was started in this process. */
export function seededHandle(daemon: DaemonRef, name: string): Promise<SeedHandle> | undefined {
  return memos.get(daemon)?.get(name)?.promise;
}

async function waitForForeignSeed(client: Client, db: string): Promise<void> {
  const deadline = Date.now() + FOREIGN_SEED_WAIT_MS;
  for (;;) {
    const main = (await client.branches(db)).find((b) => b.branch === 'main');
    if (main?.checkpoints.includes('seed') === true) return;
    if (Date.now() > deadline) {
      throw new OffshootError('TIMEOUT', `${db} exists but never got its seed checkpoint`, {
        hint: `destroy ${db} or use another seed name`,
      });
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function seedDatabase(daemon: DaemonRef, db: string, seed: Seed): Promise<void> {
  const client = await connect(daemon.sock);
  try {
    try {
      await client.create(db);
    } catch (err) {
      // Another process sharing this daemon got there first; its seed becomes ours.
      if (!isOffshootError(err, 'ALREADY_EXISTS')) throw err;
      await waitForForeignSeed(client, db);
      return;
    }
    const session = await client.open(db, 'main');
    try {
      if (typeof seed === 'function') await seed(session.path);
      else await runSql(session.path, inTransaction(seedSql(seed)), `seed ${db}`);
      await session.flush('seed');
    } finally {
      await session.close();
    }
  } finally {
    client.close();
  }
}

/**
 * Seeds the database `eval-<name>` once per daemon and name: it runs the seed in a live session and flushes it as
 * the checkpoint `seed`. Later calls share the first call's promise; a different seed under the same name throws.
 */
export function seedOnce(daemon: DaemonRef, opts: SeedOnceOptions): Promise<SeedHandle> {
  const name = opts.name ?? 'default';
  const fingerprint = seedFingerprint(opts.seed);
  let byName = memos.get(daemon);
  if (byName === undefined) memos.set(daemon, (byName = new Map()));
  const memo = byName.get(name);
  if (memo !== undefined) {
    if (memo.fingerprint !== fingerprint) {
      return Promise.reject(
        new OffshootError(
          'INVALID_ARGUMENT',
          `seedOnce(name=${JSON.stringify(name)}): called again with a DIFFERENT seed than the one that already ` +
            `seeded eval-${name}; seeds are memoized by name, not by content`,
          { hint: `pass a different name for a different seed, or the same seed on every call for "${name}"` },
        ),
      );
    }
    return memo.promise;
  }
  const db = `eval-${name}`;
  const promise = seedDatabase(daemon, db, opts.seed).then((): SeedHandle => ({ db, checkpoint: 'seed', name }));
  byName.set(name, { fingerprint, promise });
  return promise;
}
