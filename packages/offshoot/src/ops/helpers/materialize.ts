import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { DataObject } from '../../core/keys.js';
import { applyChain, applySegments, type ChainResult } from '../../ltx/apply.js';
import { commitRename, tempPathFor, writeFileAtomic } from '../../platform/atomic-file.js';
import { cloneOrCopy } from '../../sqlite/clone-file.js';
import { FileSource, geometryOf, scanPageSums } from '../../sqlite/page-scan.js';
import { loadPageHasher } from '../../sqlite/page-hash.js';
import { PageSums, pageSumsPath, readPageSums } from '../../sqlite/page-sums.js';
import type { ResolvedChain } from '../../store/chain-resolver.js';
import type { OpsContext } from './context.js';
import { chainCacheDir } from './paths.js';

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
}

/** The cache id of a chain: SHA-256 of its members' keys, so equal chains are equal bytes by construction. */
export function chainId(members: readonly DataObject[]): string {
  const h = createHash('sha256');
  for (const m of members) h.update(m.key).update('\n');
  return h.digest('hex');
}

function sourcesFor(ctx: OpsContext, members: readonly DataObject[], label?: string): Array<() => Promise<Readable>> {
  const total = members.reduce((a, m) => a + (m.size ?? 0), 0);
  const bar = label !== undefined && total > 0 ? ctx.progress?.() : undefined;
  if (!bar) return members.map((m) => () => ctx.store.backend.getStream(m.key));
  let done = 0;
  let opened = 0;
  return members.map((m) => async () => {
    if (opened++ === 0) bar.start(label as string, total);
    const last = opened === members.length;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        bar.update((done += chunk.length));
        cb(null, chunk);
      },
      flush(cb) {
        if (last) bar.stop();
        cb();
      },
    });
    const src = await ctx.store.backend.getStream(m.key);
    src.on('error', (err) => counted.destroy(err));
    return src.pipe(counted);
  });
}

async function readEntry(dir: string, id: string): Promise<{ path: string; meta: EntryMeta } | undefined> {
  const path = join(dir, `${id}.db`);
  try {
    const meta = JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as EntryMeta;
    await stat(path);
    return { path, meta };
  } catch {
    return undefined;
  }
}

function scanFile(path: string): PageSums {
  const src = new FileSource(path);
  try {
    return scanPageSums(src, geometryOf(src, src.size, path));
  } finally {
    src.close();
  }
}

/**
 * Returns the immutable cache entry (checkouts-ro/<db>/~by-chain/<id>.db, mode 0444) for a chain, building it if
 * needed: from the longest cached prefix plus the remaining segments, or from scratch. Entries are complete
 * before they are visible, and nothing reads a writable checkout to make one.
 */
export async function cachedChain(
  ctx: OpsContext,
  db: string,
  chain: ResolvedChain,
  label?: string,
): Promise<{ path: string; result: Materialized }> {
  const dir = chainCacheDir(ctx.checkoutRoot, db);
  const ids = chain.members.map((_, i) => chainId(chain.members.slice(0, i + 1)));
  const fullId = ids[ids.length - 1] as string;
  const full = await readEntry(dir, fullId);
  if (full) {
    const sums = (await readPageSums(full.path)) ?? scanFile(full.path);
    return {
      path: full.path,
      result: {
        txid: full.meta.txid,
        checksum: BigInt('0x' + full.meta.checksum),
        pageSize: full.meta.page_size,
        commit: full.meta.commit,
        sums,
      },
    };
  }
  await mkdir(dir, { recursive: true });
  const tmp = tempPathFor(join(dir, `${fullId}.db`));
  let applied: ChainResult | undefined;
  let appliedSums: BigUint64Array | undefined;
  const onSums = (sums: BigUint64Array): void => {
    appliedSums = sums;
  };
  // Fast page hashes for the sidecar come from the pages as they are written: no second read of the file.
  const hasher = await loadPageHasher();
  let hashes = new Uint32Array(0);
  const onPage = (pgno: number, data: Buffer): void => {
    if (2 * pgno > hashes.length) {
      const grown = new Uint32Array(Math.max(2 * pgno, 2 * hashes.length));
      grown.set(hashes);
      hashes = grown;
    }
    hasher.hash(data, hashes, pgno - 1);
  };
  try {
    for (let k = ids.length - 2; k >= 0 && applied === undefined; k--) {
      const prefix = await readEntry(dir, ids[k] as string);
      if (!prefix) continue;
      try {
        await cloneOrCopy(prefix.path, tmp);
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
        sourcesFor(ctx, chain.members.slice(k + 1), label),
        prefixSums ? { sums: prefixSums.sums, onSums, onPage } : { onSums, onPage },
      );
    }
    if (applied === undefined) {
      applied = await applyChain(sourcesFor(ctx, chain.members, label), tmp, { onSums, onPage });
    }
    // The apply kept every page's checksum: the sidecar needs no second read of the file.
    const all = appliedSums ?? new BigUint64Array(0);
    const exact = new Uint32Array(2 * all.length);
    exact.set(hashes.subarray(0, exact.length));
    const sums = new PageSums(applied.pageSize, all, exact);
    const meta: EntryMeta = {
      txid: applied.txid,
      checksum: applied.checksum.toString(16),
      page_size: applied.pageSize,
      commit: applied.commit,
      keys: chain.members.map((m) => m.key),
    };
    await writeFileAtomic(join(dir, `${fullId}.json`), JSON.stringify(meta) + '\n');
    await writeFileAtomic(pageSumsPath(join(dir, `${fullId}.db`)), sums.encode());
    await chmod(tmp, 0o444);
    await commitRename(tmp, join(dir, `${fullId}.db`));
    return {
      path: join(dir, `${fullId}.db`),
      result: {
        txid: applied.txid,
        checksum: applied.checksum,
        pageSize: applied.pageSize,
        commit: applied.commit,
        sums,
      },
    };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
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
      await cloneOrCopy(entry.path, dest);
      await chmod(dest, 0o644);
      return entry.result;
    } catch (err) {
      // The ro-cache janitor may evict an entry between lookup and clone; rebuilding it is always correct.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2) throw err;
    }
  }
}
