import { existsSync, statSync, utimesSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Ref } from '../core/ref.js';
import { fail, hasCode } from '../core/errors.js';
import { formatTarget, type Target } from '../core/target.js';
import { tempPathFor } from '../platform/atomic-file.js';
import {
  backdatedSeconds,
  checkClean,
  fingerprintOf,
  readSidecar,
  sameIdentity,
  writeSidecar,
} from '../sqlite/checkout-sidecar.js';
import { cloneOrCopy } from '../sqlite/clone-file.js';
import { writePageSums } from '../sqlite/page-sums.js';
import { quiesce } from '../sqlite/quiesce.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { headIdentity, readBranch, refuseForeignLease } from './helpers/branch-ref.js';
import type { OpsContext } from './helpers/context.js';
import { explainDamage } from './helpers/damaged-object.js';
import { cachedChain } from './helpers/materialize.js';
import { checkoutPath } from './helpers/paths.js';

/** Result of a checkout: where the file is, and whether the existing one was proven current and kept. */
export interface CheckoutResult {
  path: string;
  reused: boolean;
  txid: number;
}

/**
 * Materializes a ref's head at the branch's checkout path. The new file is built privately and renamed into place,
 * so a connection on the old file never sees it rewritten; the caller has quiesced any existing checkout, so the
 * old -wal/-shm (empty) are removed rather than replayed onto the new file. The sidecars are written first, naming
 * the private file's inode and the mtime it is about to get: their fsyncs then do not wait for the copy's data to
 * reach the disk, and until the rename they describe a file that is not at the path, so they can never vouch for
 * the wrong content.
 */
export async function installCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  label = `checkout ${db}@${branch}`,
): Promise<string> {
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  await mkdir(dirname(path), { recursive: true });
  const chain = await new ChainResolver(ctx.store).resolve(ref.lineage, ref.head_txid);
  const tmp = tempPathFor(path);
  try {
    for (let attempt = 0; ; attempt++) {
      const entry = await explainDamage(ctx, { db, branch }, () => cachedChain(ctx, db, chain, label));
      await writeFile(tmp, '', { mode: 0o644 });
      const past = backdatedSeconds(ctx.now().getTime());
      const planned = {
        size: entry.result.commit * entry.result.pageSize,
        mtime_ns: (BigInt(past) * 1_000_000_000n).toString(),
        ino: statSync(tmp, { bigint: true }).ino.toString(),
      };
      const m = entry.result;
      await writePageSums(path, m.sums);
      await writeSidecar(path, {
        ...headIdentity(ref),
        ltx_checksum: m.checksum.toString(16),
        page_size: m.pageSize,
        commit: m.commit,
        ...planned,
      });
      try {
        await cloneOrCopy(entry.path, tmp);
      } catch (err) {
        // The ro-cache janitor may evict an entry between lookup and clone; rebuilding it is always correct.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2) throw err;
        continue;
      }
      await chmod(tmp, 0o644);
      utimesSync(tmp, past, past);
      const fp = fingerprintOf(tmp);
      if (fp.size !== planned.size || fp.mtime_ns !== planned.mtime_ns || fp.ino !== planned.ino) {
        await writeSidecar(path, {
          ...headIdentity(ref),
          ltx_checksum: m.checksum.toString(16),
          page_size: m.pageSize,
          commit: m.commit,
          ...fp,
        });
      }
      break;
    }
    await rm(`${path}-wal`, { force: true });
    await rm(`${path}-shm`, { force: true });
    // No directory fsync: if a crash loses the rename, the old file is back at the path under sidecars that name the
    // new inode, which reads as modified, never as clean.
    await rename(tmp, path);
    return path;
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** A compact UTC timestamp for names: 20260101T120000Z. */
function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * Moves a checkout that cannot be trusted (garbage, or one the caller gave up on) aside as
 * `<branch>.db.aside-<time>` (its -wal and -shm beside it under the same suffix), so nothing of it is lost and the
 * path is free for a fresh materialization. A connection still holding the old file keeps writing to the moved one.
 */
async function moveAside(ctx: OpsContext, path: string): Promise<string> {
  const aside = `${path}.aside-${stamp(ctx.now())}-${process.pid}`;
  for (const suffix of ['-wal', '-shm', '']) {
    if (existsSync(`${path}${suffix}`)) await rename(`${path}${suffix}`, `${aside}${suffix}`);
  }
  await rm(`${path}.sum`, { force: true });
  await rm(`${path}.pages`, { force: true });
  return aside;
}

/**
 * `offshoot checkout db[@branch] [--force]`: returns the writable checkout, proving an existing one clean and
 * current in O(1) without reading it, else quiescing it (BUSY past the timeout) and re-materializing the head. A
 * checkout that is not a sound database fails CORRUPT; with force it is moved aside (never deleted) and the head
 * is materialized in its place, without looking at the old file.
 */
export async function checkout(ctx: OpsContext, t: Target, opts: { force?: boolean } = {}): Promise<CheckoutResult> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  refuseForeignLease(ctx, t.db, t.branch, ref, 'checkout');
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  const head = headIdentity(ref);
  if (existsSync(path) && opts.force) {
    const aside = await moveAside(ctx, path);
    ctx.warn(`moved the existing checkout of ${t.db}@${t.branch} aside to ${aside}; ${path} now holds the head`);
  } else if (existsSync(path)) {
    const sc = readSidecar(path);
    if (sameIdentity(sc, head) && (await checkClean(path, sc)) === 'clean')
      return { path, reused: true, txid: ref.head_txid };
    try {
      quiesce(path);
    } catch (err) {
      if (!hasCode(err, 'CORRUPT')) throw err;
      throw fail('CORRUPT', `the checkout of ${t.db}@${t.branch} is not a sound SQLite database: ${err.message}`, {
        hint: `run 'offshoot checkout ${formatTarget(t)} --force' to move it aside and re-materialize the branch head`,
        cause: err,
      });
    }
    const verdict = await checkClean(path, sc);
    if (verdict === 'clean' && sameIdentity(sc, head)) return { path, reused: true, txid: ref.head_txid };
    if (verdict !== 'clean') {
      ctx.warn(
        `replacing ${path}: its local changes were never checkpointed and are discarded (checkpoint before checkout to keep them)`,
      );
    }
  }
  await installCheckout(ctx, t.db, t.branch, ref);
  return { path, reused: false, txid: ref.head_txid };
}
