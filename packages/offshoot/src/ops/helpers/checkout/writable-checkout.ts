import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { fail, hasCode } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import { formatTarget, type Target } from '../../../core/target.js';
import { checkClean, readSidecar, sameIdentity } from '../../../sqlite/checkout-sidecar.js';
import { quiesce } from '../../../sqlite/quiesce.js';
import { headIdentity } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { checkoutPath } from '../context/paths.js';
import { asidePathFor } from './aside-path.js';
import { installCheckout, placeCheckout, type StagedCheckout } from './install-checkout.js';
import { recoverUnsynced } from './recover-unsynced.js';
import { readUnsyncedNote } from './unsynced-checkout.js';

/** Result of a checkout: where the file is, and whether the existing one was proven current and kept. */
export interface CheckoutResult {
  path: string;
  reused: boolean;
  txid: number;
  /** The checkout holds changes no checkpoint has recorded yet (kept; `discard` drops them). */
  dirty: boolean;
  /** The undo point that kept the local changes of a checkout whose branch moved under it. */
  kept?: string;
  /** The path is a live session's, whose writes are captured as they commit (see checkoutLive). */
  live?: true;
}

/** What a checkout may do to an existing file: force moves it aside, discard drops its uncheckpointed changes. */
export interface WritableCheckoutOptions {
  force?: boolean;
  discard?: boolean;
  /** The head staged for this checkout (stageCheckout): placed instead of materialized again if still the head. */
  staged?: StagedCheckout;
  /**
   * Keeps what a checkout whose branch moved under it holds beyond the head, as an undo point, and names it (the
   * caller's keepDivergedCheckout: the undo points are safety's, a floor above checkouts).
   */
  keepDiverged: () => Promise<{ branch: string } | undefined>;
}

/**
 * Moves a checkout that cannot be trusted (garbage, or one the caller gave up on) aside as
 * `<branch>.db.aside-<time>` (its -wal and -shm beside it under the same suffix), so nothing of it is lost and the
 * path is free for a fresh materialization. A connection still holding the old file keeps writing to the moved one.
 */
async function moveAside(ctx: OpsContext, path: string): Promise<string> {
  const aside = asidePathFor(ctx, path);
  for (const suffix of ['-wal', '-shm', '']) {
    if (existsSync(`${path}${suffix}`)) await rename(`${path}${suffix}`, `${aside}${suffix}`);
  }
  await rm(`${path}.sum`, { force: true });
  await rm(`${path}.pages`, { force: true });
  return aside;
}

/**
 * The writable checkout of a branch at `ref` (read by the caller, who has applied the policy), proving an existing one clean and current in O(1)
 * without reading it. A current checkout with uncheckpointed changes is a checkout too: its path is returned, the
 * changes kept and reported (`dirty`); only `discard` re-materializes the head over them. A checkout whose branch
 * moved under it (a rollback or promote that could not refresh it, another machine's checkpoint) is quiesced and,
 * unless discarded or unchanged since it was materialized, its content kept as an undo point
 * (`<branch>-pre-reopen`) before the head is materialized in its place. A checkout that is not a sound database
 * fails CORRUPT; with force it is moved aside (never deleted) and the head is materialized in its place.
 */
export async function writableCheckout(
  ctx: OpsContext,
  t: Target,
  ref: Ref,
  opts: WritableCheckoutOptions,
): Promise<CheckoutResult> {
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  const head = headIdentity(ref);
  const note = readUnsyncedNote(ctx.checkoutRoot, t);
  if (note !== undefined) await recoverUnsynced(ctx, note);
  let kept: string | undefined;
  if (existsSync(path) && opts.force) {
    const aside = await moveAside(ctx, path);
    ctx.warn(`moved the existing checkout of ${t.db}@${t.branch} aside to ${aside}; ${path} now holds the head`);
  } else if (existsSync(path)) {
    const sc = readSidecar(path);
    if (sameIdentity(sc, head) && (await checkClean(path, sc)) === 'clean')
      return { path, reused: true, txid: ref.head_txid, dirty: false };
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
    if (sameIdentity(sc, head)) {
      if (verdict === 'clean') return { path, reused: true, txid: ref.head_txid, dirty: false };
      if (!opts.discard) return { path, reused: true, txid: ref.head_txid, dirty: true };
      ctx.warn(`replacing ${path}: its uncheckpointed changes are discarded, as asked`);
    } else if (verdict !== 'clean' && !opts.discard) {
      kept = (await opts.keepDiverged())?.branch;
      if (kept !== undefined)
        ctx.warn(
          `${t.db}@${t.branch} moved under its checkout; the checkout's uncheckpointed changes are kept as ${t.db}@${kept}`,
        );
    }
  }
  const staged = opts.staged;
  if (staged !== undefined && staged.path === path && sameIdentity(staged.identity, head)) await placeCheckout(staged);
  else await installCheckout(ctx, t.db, t.branch, ref);
  return { path, reused: false, txid: ref.head_txid, dirty: false, ...(kept !== undefined ? { kept } : {}) };
}
