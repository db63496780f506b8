import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { commitRename, tempPathFor } from '../platform/atomic-file.js';
import { backdateAndFingerprint, checkClean, readSidecar, sameIdentity, sidecarPath, writeSidecar } from '../sqlite/checkout-sidecar.js';
import { writePageSums, pageSumsPath } from '../sqlite/page-sums.js';
import { quiesce } from '../sqlite/quiesce.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { headIdentity, readBranch, refuseForeignLease } from './branch-ref.js';
import type { OpsContext } from './context.js';
import { materializeTo } from './materialize.js';
import { checkoutPath } from './paths.js';

/** Result of a checkout: where the file is, and whether the existing one was proven current and kept. */
export interface CheckoutResult {
  path: string;
  reused: boolean;
  txid: number;
}

/**
 * Materializes a ref's head at the branch's checkout path. The new file is built privately and renamed into place,
 * so a connection on the old file never sees it rewritten; the caller has quiesced any existing checkout, so the
 * old -wal/-shm (empty) are removed rather than replayed onto the new file.
 */
export async function installCheckout(ctx: OpsContext, db: string, branch: string, ref: Ref): Promise<string> {
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  await mkdir(dirname(path), { recursive: true });
  const chain = await new ChainResolver(ctx.store).resolve(ref.lineage, ref.head_txid);
  const tmp = tempPathFor(path);
  try {
    const m = await materializeTo(ctx, db, chain, tmp, `checkout ${db}@${branch}`);
    const fp = backdateAndFingerprint(tmp, ctx.now().getTime());
    await rm(sidecarPath(path), { force: true });
    await rm(pageSumsPath(path), { force: true });
    await rm(`${path}-wal`, { force: true });
    await rm(`${path}-shm`, { force: true });
    await commitRename(tmp, path);
    await writePageSums(path, m.sums);
    await writeSidecar(path, { ...headIdentity(ref), ltx_checksum: m.checksum.toString(16), page_size: m.pageSize, commit: m.commit, ...fp });
    return path;
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * `offshoot checkout db[@branch]`: returns the writable checkout, proving an existing one clean and current in O(1)
 * without reading it, else quiescing it (BUSY past the timeout) and re-materializing the head.
 */
export async function checkout(ctx: OpsContext, t: Target): Promise<CheckoutResult> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  refuseForeignLease(ctx, t.db, t.branch, ref, 'checkout');
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  const head = headIdentity(ref);
  if (existsSync(path)) {
    const sc = readSidecar(path);
    if (sameIdentity(sc, head) && (await checkClean(path, sc)) === 'clean') return { path, reused: true, txid: ref.head_txid };
    quiesce(path);
    const verdict = await checkClean(path, sc);
    if (verdict === 'clean' && sameIdentity(sc, head)) return { path, reused: true, txid: ref.head_txid };
    if (verdict !== 'clean') {
      ctx.warn(`replacing ${path}: its local changes were never checkpointed and are discarded (checkpoint before checkout to keep them)`);
    }
  }
  await installCheckout(ctx, t.db, t.branch, ref);
  return { path, reused: false, txid: ref.head_txid };
}
