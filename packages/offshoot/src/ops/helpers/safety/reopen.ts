import { existsSync, rmSync } from 'node:fs';
import type { Ref } from '../../../core/ref.js';
import { formatTarget, type Target } from '../../../core/target.js';
import { quiesce } from '../../../sqlite/quiesce.js';
import { restoreWalMode } from '../../../sqlite/wal-mode.js';
import { undoCommand } from '../branch/undo-command.js';
import { installCheckout } from '../checkout/install-checkout.js';
import type { OpsContext } from '../context/context.js';
import { checkoutPath } from '../context/paths.js';
import { keepDivergedCheckout } from './keep-diverged.js';
import { SAFETY_FORK_TTL } from './safety-fork.js';

/**
 * How a checkout at rest broke the connection contract of live capture (it left WAL mode, or a rollback journal sits
 * beside it), as the session's capture judges it: one clause saying what was found; undefined when it holds.
 */
export type JournalCheck = (path: string) => { found: string } | undefined;

/** The command that takes the writes kept aside as db@kept back onto the branch, once its session is closed. */
function takeThem(t: Target, kept: string, ref: Ref): string {
  return `to take them, close the session and run '${undoCommand(t.db, kept, t.branch, ref.protected === true)}'`;
}

/**
 * Keeps whatever the checkout holds beyond the branch head (writes a killed daemon captured but never flushed, or
 * at-rest edits never checkpointed) as an undo branch, then re-materializes the head, so the checkout a session
 * opens is exactly the durable head and nothing is discarded. `ref` is the one the session's lease was written in:
 * its head cannot move while the lease is the session's. Returns the warnings for the caller.
 */
export async function keepUnflushed(ctx: OpsContext, t: Target, ref: Ref): Promise<string[]> {
  const kept = await keepDivergedCheckout(ctx, t, ref);
  if (kept === undefined) return [];
  quiesce(checkoutPath(ctx.checkoutRoot, t.db, t.branch));
  await installCheckout(ctx, t.db, t.branch, ref);
  const name = formatTarget(t);
  const message =
    `the checkout of ${name} held writes that were never made durable (a daemon stopped before flushing them, or edits never checkpointed); ` +
    `they are kept as ${t.db}@${kept.branch} (checkpoint "unflushed", txid ${kept.txid}, TTL ${SAFETY_FORK_TTL}) and the session starts from the durable head (txid ${ref.head_txid}); ` +
    takeThem(t, kept.branch, ref);
  ctx.warn(message);
  return [message];
}

/**
 * A checkout found out of WAL mode as its session opens: another tool set journal_mode on it at rest, or left a
 * rollback journal beside it. Nothing was capturing it, so nothing was missed. It is put back in WAL mode (a hot
 * journal rolled back first); what it holds beyond the durable head, if anything, is kept as an undo branch
 * (`<branch>-pre-reopen`), and the head is re-materialized either way, so the session starts from exactly the head.
 * `ref` is the one the session's lease was written in. Returns what the open must say; [] when the checkout is in WAL
 * mode (or there is none).
 */
export async function resetJournalMode(ctx: OpsContext, t: Target, ref: Ref, check: JournalCheck): Promise<string[]> {
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (!existsSync(path)) return [];
  const breach = check(path);
  if (breach === undefined) return [];
  restoreWalMode(path);
  // A database in WAL mode never reads a rollback journal: one left beside it (a stale file) is only in the way.
  rmSync(`${path}-journal`, { force: true });
  const kept = await keepDivergedCheckout(ctx, t, ref);
  quiesce(path);
  await installCheckout(ctx, t.db, t.branch, ref);
  const name = formatTarget(t);
  const found =
    `the checkout of ${name} was in rollback-journal mode, left so at rest by another connection (${breach.found}), ` +
    'with no session capturing it';
  const message =
    kept === undefined
      ? `${found}; it held nothing beyond the durable head (txid ${ref.head_txid}), so it was re-materialized in WAL mode and the session starts from there; ` +
        'make every connection leave journal_mode alone'
      : `${found}; it held writes no checkpoint recorded, kept as ${t.db}@${kept.branch} (checkpoint "unflushed", txid ${kept.txid}, TTL ${SAFETY_FORK_TTL}), ` +
        `and the session starts from the durable head (txid ${ref.head_txid}) in WAL mode; ` +
        takeThem(t, kept.branch, ref);
  ctx.warn(message);
  return [message];
}
