import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { DataObject } from '../../../core/keys.js';
import { applyChain, applySegments, type ChainResult } from '../../../ltx/apply.js';
import { commitRename, replaceFile, tempPathFor, writeFileAtomic } from '../../../platform/atomic-file.js';
import { type Fingerprint, fingerprintOf, sameFingerprint } from '../../../sqlite/checkout-sidecar.js';
import { cloneOrCopy } from '../../../sqlite/clone-file.js';
import { FileSource, geometryOf, scanPageSums } from '../../../sqlite/page-scan.js';
import { loadPageHasher } from '../../../sqlite/page-hash.js';
import { PageSums, pageSumsPath, readPageSums } from '../../../sqlite/page-sums.js';
import type { ResolvedChain } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';
import { DamagedObjectError, isDamage } from '../context/damaged-object.js';
import { chainCacheDir, volatileCacheDir } from '../context/paths.js';
import { entryPageSums } from './entry-sums.js';

/** What a materialized database file holds. */
export interface Materialized {
  txid: number;
  /** Rolling LTX checksum of the file. */
  checksum: bigint;
  pageSize: number;
  commit: number;
  sums: PageSums;
}

interface EntryMeta {
  txid: number;
  checksum: string;
  page_size: number;
  commit: number;
  keys: string[];
  /** Size, mtime and inode of the sealed (0444) entry; one that no longer matches is never served. */
  fingerprint?: Fingerprint;
}

/** The cache id of a chain: SHA-256 of its members' keys, so equal chains are equal bytes by construction. */
export function chainId(members: readonly DataObject[]): string {
  const h = createHash('sha256');
  for (const m of members) h.update(m.key).update('\n');
  return h.digest('hex');
}

/** The member whose stream was opened last: chains are applied in order, so a verification failure is its. */
interface Reading {
  current: DataObject | undefined;
}

function sourcesFor(
  ctx: OpsContext,
  members: readonly DataObject[],
  reading: Reading,
  label?: string,
): Array<() => Promise<Readable>> {
  const total = members.reduce((a, m) => a + (m.size ?? 0), 0);
  const bar = label !== undefined && total > 0 ? ctx.progress?.() : undefined;
  if (!bar)
    return members.map((m) => () => {
      reading.current = m;
      return ctx.store.backend.getStream(m.key);
    });
  let done = 0;
  let opened = 0;
  return members.map((m) => async () => {
    if (opened++ === 0) bar.start(label as string, total);
    const last = opened === members.length;
    reading.current = m;
    const src = await ctx.store.backend.getStream(m.key);
    const counted = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        // A sink may stop the work (a cancelled MCP call throws here): that fails the stream, not the process, and
        // only once the source has closed its file, so the caller's rejection never races an open descriptor.
        try {
          bar.update((done += chunk.length));
        } catch (err) {
          src.destroy();
          afterClose(src, () => cb(err as Error));
          return;
        }
        cb(null, chunk);
      },
      flush(cb) {
        if (last) bar.stop();
        cb();
      },
    });
    src.on('error', (err) => afterClose(src, () => counted.destroy(err)));
    // pipe() leaves its source open when the destination stops early (a cancelled call): close it with the counter,
    // or its file handle waits for the garbage collector, which Node 26 treats as a fatal error.
    counted.once('close', () => src.destroy());
    return src.pipe(counted);
  });
}

/** Runs then once the stream has closed (its file descriptor given back), at once if it already has. */
function afterClose(stream: Readable, then: () => void): void {
  if (stream.closed) then();
  else stream.once('close', then);
}

/** Removes a cache entry: the database first (a reader that misses it treats the entry as absent), then its companions. */
export async function discardEntry(dbPath: string): Promise<void> {
  await rm(dbPath, { force: true });
  await rm(`${dbPath}.last-used`, { force: true });
  await rm(pageSumsPath(dbPath), { force: true });
  await rm(dbPath.replace(/\.db$/, '.json'), { force: true });
}

/**
 * Reads a cache entry, or undefined. An entry whose file no longer has the size, mtime and inode recorded when it was
 * sealed (or that records none: written by an earlier version) is discarded rather than served, so the caller
 * rebuilds it from the store.
 */
async function readEntry(
  dir: string,
  id: string,
): Promise<{ path: string; meta: EntryMeta; fingerprint: Fingerprint } | undefined> {
  const path = join(dir, `${id}.db`);
  let meta: EntryMeta;
  let fp: Fingerprint;
  try {
    meta = JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as EntryMeta;
    fp = fingerprintOf(path);
  } catch {
    return undefined;
  }
  const want = meta.fingerprint;
  if (want === undefined || !sameFingerprint(fp, want)) {
    await discardEntry(path);
    return undefined;
  }
  return { path, meta, fingerprint: fp };
}

/** The first valid entry of id among dirs. */
async function firstEntry(
  dirs: readonly string[],
  id: string,
): Promise<{ path: string; meta: EntryMeta; fingerprint: Fingerprint } | undefined> {
  for (const dir of dirs) {
    const e = await readEntry(dir, id);
    if (e !== undefined) return e;
  }
  return undefined;
}

/**
 * Where a chain's cache entry lives, then where else its prefixes may: the shared cache, or for a chain through objects
 * an ephemeral fork holds, the daemon's own volatile cache first and the shared one for its durable prefixes.
 */
function cacheDirs(ctx: OpsContext, db: string, chain: ResolvedChain): string[] {
  const held = new Set<string>();
  for (let i = chain.members.length - 1; i >= 0; i--) {
    const lineage = (chain.members[i] as DataObject).lineage;
    if (ctx.ephemeral?.holdsLineage(lineage) === true) held.add(lineage);
  }
  // By the newest held lineage the chain reaches: its entries go when the daemon lets go of that lineage.
  const dirs = [...held].map((l) => volatileCacheDir(ctx.checkoutRoot, db, l));
  return [...dirs, chainCacheDir(ctx.checkoutRoot, db)];
}

function scanFile(path: string): PageSums {
  const src = new FileSource(path);
  try {
    return scanPageSums(src, geometryOf(src, src.size, path));
  } finally {
    src.close();
  }
}

/** The cache ids of every prefix of a chain, shortest first (the last is the chain's own). */
export function prefixIds(members: readonly DataObject[]): string[] {
  return members.map((_, i) => chainId(members.slice(0, i + 1)));
}

/**
 * The chain with its members' sizes, which a progress bar totals: a resolver that listed keys alone left them unknown,
 * so each is statted here, once a build is about to download them, and only when progress is reported.
 */
async function withSizes(ctx: OpsContext, chain: ResolvedChain, label: string | undefined): Promise<ResolvedChain> {
  if (label === undefined || ctx.progress === undefined || chain.members.every((m) => m.size !== undefined))
    return chain;
  const infos = await Promise.all(chain.members.map((m) => ctx.store.backend.stat(m.key)));
  return { ...chain, members: chain.members.map((m, i) => ({ ...m, size: infos[i]?.size ?? 0 })) };
}

/**
 * Builds the chain's state into the private file `tmp`: from the longest valid cached prefix plus the remaining
 * members, or from scratch. Nothing is added to the cache. The apply keeps every page's LTX checksum and (with
 * keepSums) fast hash as it writes, so the page sums need no second read of the file. A member that fails
 * verification is named.
 */
async function buildChain(
  ctx: OpsContext,
  dirs: readonly string[],
  unsized: ResolvedChain,
  tmp: string,
  label: string | undefined,
  keepSums = true,
  sync = true,
): Promise<{ applied: ChainResult; sums: PageSums }> {
  const chain = await withSizes(ctx, unsized, label);
  const ids = prefixIds(chain.members);
  const reading: Reading = { current: undefined };
  let appliedSums: BigUint64Array | undefined;
  const onSums = (sums: BigUint64Array): void => {
    appliedSums = sums;
  };
  const hasher = keepSums ? await loadPageHasher() : undefined;
  let hashes = new Uint32Array(0);
  const onPage = (pgno: number, data: Buffer): void => {
    if (2 * pgno > hashes.length) {
      const grown = new Uint32Array(Math.max(2 * pgno, 2 * hashes.length));
      grown.set(hashes);
      hashes = grown;
    }
    hasher?.hash(data, hashes, pgno - 1);
  };
  const hooks = { ...(hasher === undefined ? { onSums } : { onSums, onPage }), ...(sync ? {} : { sync: false }) };
  let applied: ChainResult | undefined;
  try {
    for (let k = ids.length - 2; k >= 0 && applied === undefined; k--) {
      const prefix = await firstEntry(dirs, ids[k] as string);
      if (!prefix) continue;
      try {
        await cloneOrCopy(prefix.path, tmp, true);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // evicted meanwhile
        throw err;
      }
      await chmod(tmp, 0o644);
      const prefixSums = await readPageSums(prefix.path);
      hashes = prefixSums?.hashes ? prefixSums.hashes.slice() : new Uint32Array(0);
      applied = await applySegments(
        tmp,
        BigInt('0x' + prefix.meta.checksum),
        sourcesFor(ctx, chain.members.slice(k + 1), reading, label),
        prefixSums ? { sums: prefixSums.sums, ...hooks } : hooks,
      );
    }
    applied ??= await applyChain(sourcesFor(ctx, chain.members, reading, label), tmp, hooks);
  } catch (err) {
    if (isDamage(err) && reading.current !== undefined) throw new DamagedObjectError(reading.current, err);
    throw err;
  }
  const all = appliedSums ?? new BigUint64Array(0);
  const exact = new Uint32Array(2 * all.length);
  exact.set(hashes.subarray(0, exact.length));
  return { applied, sums: new PageSums(applied.pageSize, all, exact) };
}

function resultOf(meta: EntryMeta, sums: PageSums): Materialized {
  return {
    txid: meta.txid,
    checksum: BigInt('0x' + meta.checksum),
    pageSize: meta.page_size,
    commit: meta.commit,
    sums,
  };
}

/** A per-chain cache entry: its file, what it holds, and the page-sum sidecar its sums were read from or written to. */
export interface CachedEntry {
  path: string;
  result: Materialized;
  /** The entry's `.pages`, whose bytes are result.sums encoded; absent when the sums were scanned from the file. */
  sumsFile?: string;
  /** Size, mtime and inode of the sealed file, as recorded beside it and found on it. */
  fingerprint: Fingerprint;
}

/** Where the cache entry of a chain is (whether or not it has been built): the file cachedChain returns for it. */
export function entryPathOf(ctx: OpsContext, db: string, chain: ResolvedChain): string {
  return join(cacheDirs(ctx, db, chain)[0] as string, `${chainId(chain.members)}.db`);
}

/**
 * Returns the immutable cache entry (checkouts-ro/<db>/~by-chain/<id>.db, mode 0444) for a chain, building it if
 * needed: from the longest cached prefix plus the remaining segments, or from scratch. Entries are complete and
 * sealed (read-only, fingerprint recorded) before they are visible, and nothing reads a writable checkout to make one.
 */
export async function cachedChain(
  ctx: OpsContext,
  db: string,
  chain: ResolvedChain,
  label?: string,
): Promise<CachedEntry> {
  // A chain through objects an ephemeral fork holds is a state gone with its daemon: its entry is built where the next
  // daemon removes it, never synced, and never shared (its id could name a durable chain once the fork is kept).
  const dirs = cacheDirs(ctx, db, chain);
  const volatile = dirs.length > 1;
  const dir = dirs[0] as string;
  const fullId = chainId(chain.members);
  const full = await readEntry(dir, fullId);
  if (full) {
    const read = await entryPageSums(full.path);
    return {
      path: full.path,
      result: resultOf(full.meta, read ?? scanFile(full.path)),
      ...(read !== undefined ? { sumsFile: pageSumsPath(full.path) } : {}),
      fingerprint: full.fingerprint,
    };
  }
  await mkdir(dir, { recursive: true });
  const final = join(dir, `${fullId}.db`);
  const tmp = tempPathFor(final);
  try {
    const { applied, sums } = await buildChain(ctx, dirs, chain, tmp, label, true, !volatile);
    await chmod(tmp, 0o444);
    // The rename keeps inode and mtime, so the sealed file's fingerprint is the visible entry's.
    const fingerprint = fingerprintOf(tmp);
    const meta: EntryMeta = {
      txid: applied.txid,
      checksum: applied.checksum.toString(16),
      page_size: applied.pageSize,
      commit: applied.commit,
      keys: chain.members.map((m) => m.key),
      fingerprint,
    };
    const write = volatile ? replaceFile : writeFileAtomic;
    await write(join(dir, `${fullId}.json`), JSON.stringify(meta) + '\n');
    await write(pageSumsPath(final), sums.encode());
    if (volatile) await rename(tmp, final);
    else await commitRename(tmp, final);
    return {
      path: final,
      result: {
        txid: applied.txid,
        checksum: applied.checksum,
        pageSize: applied.pageSize,
        commit: applied.commit,
        sums,
      },
      sumsFile: pageSumsPath(final),
      fingerprint,
    };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Writes a chain's state to the private file `dest` without filling the cache (export): a clone of a valid cache
 * entry of the whole chain if there is one, else built from the longest cached prefix or from scratch.
 */
export async function materializeUncached(
  ctx: OpsContext,
  db: string,
  chain: ResolvedChain,
  dest: string,
  label?: string,
): Promise<{ txid: number }> {
  const dirs = cacheDirs(ctx, db, chain);
  const full = await firstEntry(dirs, chainId(chain.members));
  if (full) {
    try {
      await cloneOrCopy(full.path, dest);
      await chmod(dest, 0o644);
      return { txid: full.meta.txid };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  // Export writes no page-sum sidecar, so it hashes no page for one.
  const { applied } = await buildChain(ctx, dirs, chain, dest, label, false);
  return { txid: applied.txid };
}

/**
 * Materializes a chain into a new private file at `dest` (which must not be shared yet): a reflink clone of the
 * cache entry where the filesystem can, a copy otherwise. The caller renames it into place. With a label, long
 * downloads report progress (a bar on a terminal).
 */
export async function materializeTo(
  ctx: OpsContext,
  db: string,
  chain: ResolvedChain,
  dest: string,
  label?: string,
): Promise<Materialized> {
  for (let attempt = 0; ; attempt++) {
    const entry = await cachedChain(ctx, db, chain, label);
    try {
      await cloneOrCopy(entry.path, dest, true);
      await chmod(dest, 0o644);
      return entry.result;
    } catch (err) {
      // The ro-cache janitor may evict an entry between lookup and clone; rebuilding it is always correct.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2) throw err;
    }
  }
}
