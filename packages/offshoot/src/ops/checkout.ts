import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { fail, hasCode } from '../core/errors.js';
import { formatTarget, type Target } from '../core/target.js';
import { checkClean, readSidecar, sameIdentity } from '../sqlite/checkout-sidecar.js';
import { quiesce } from '../sqlite/quiesce.js';
import { headIdentity, readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { installCheckout } from './helpers/checkout/install-checkout.js';
import type { OpsContext } from './helpers/context/context.js';
import { checkoutPath } from './helpers/context/paths.js';

/** Result of a checkout: where the file is, and whether the existing one was proven current and kept. */
export interface CheckoutResult {
  path: string;
  reused: boolean;
  txid: number;
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
