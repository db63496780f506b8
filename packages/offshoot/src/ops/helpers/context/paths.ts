import { join } from 'node:path';

/** The directory of a database's writable checkouts: checkouts/<db>/. */
export function checkoutDir(root: string, db: string): string {
  return join(root, 'checkouts', db);
}

/** The file name of a branch's writable checkout in its database's checkoutDir. */
export function checkoutFileName(branch: string): string {
  return `${branch}.db`;
}

/** The writable checkout of a branch: checkouts/<db>/<branch>.db (stable across repoints). */
export function checkoutPath(root: string, db: string, branch: string): string {
  return join(checkoutDir(root, db), checkoutFileName(branch));
}

/** A read-only checkpoint checkout: checkouts-ro/<db>/<branch>@<checkpoint>.db. */
export function readOnlyCheckoutPath(root: string, db: string, branch: string, checkpoint: string): string {
  return join(root, 'checkouts-ro', db, `${branch}@${checkpoint}.db`);
}

/** The immutable per-chain cache directory of a database: checkouts-ro/<db>/~by-chain/. */
export function chainCacheDir(root: string, db: string): string {
  return join(root, 'checkouts-ro', db, '~by-chain');
}

/** Every local file that belongs to a writable checkout (database, WAL, shared memory, sidecars). */
export function checkoutFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}.sum`, `${path}.pages`];
}

/** The hidden staging area under the checkout root: .scratch/<area> (no database name starts with '.'). */
export function scratchDir(root: string, area: 'tmp' | 'sessions' | 'ref-index' | 'ephemeral' | 'unsynced'): string {
  return join(root, '.scratch', area);
}

/**
 * What a daemon's ephemeral forks keep locally, under .scratch/ephemeral/ (a daemon starting removes it): the large
 * objects its overlay holds, the notes of their checkouts, and the cache entries of chains with members it holds.
 */
export function ephemeralDir(root: string, area: 'objects' | 'checkouts' | 'cache'): string {
  return join(scratchDir(root, 'ephemeral'), area);
}

/**
 * The cache entries of a database's chains that reach a lineage an ephemeral fork holds, by the newest such lineage:
 * never shared with durable chains, removed with that lineage.
 */
export function volatileCacheDir(root: string, db: string, lineage: string): string {
  return join(ephemeralDir(root, 'cache'), db, lineage);
}

/**
 * A database's ref index, the local cache of its refs' texts that status reads while the store can prove it
 * current: .scratch/ref-index/<db>.json (the name URI-encoded), beside the checkouts and never in the store.
 */
export function refIndexPath(root: string, db: string): string {
  return join(scratchDir(root, 'ref-index'), `${encodeURIComponent(db)}.json`);
}

/**
 * What offshoot keeps under a checkout root: writable and read-only checkouts, staging, the daemon lock. (A local
 * store's checkout root is the store directory itself, all of which is offshoot's.)
 */
export function managedUnder(root: string): string[] {
  return ['checkouts', 'checkouts-ro', '.scratch', 'daemon.lock'].map((name) => join(root, name));
}
