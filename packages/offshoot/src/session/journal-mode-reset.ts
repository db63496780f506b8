import { existsSync, rmSync } from 'node:fs';
import { breachOfClosed } from '../capture/journal-contract.js';
import type { Ref } from '../core/ref.js';
import { formatTarget, type Target } from '../core/target.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import { checkoutPath } from '../ops/helpers/context/paths.js';
import { installCheckout } from '../ops/helpers/checkout/install-checkout.js';
import { keepDivergedCheckout } from '../ops/helpers/safety/keep-diverged.js';
import { SAFETY_FORK_TTL } from '../ops/helpers/safety/safety-fork.js';
import { quiesce } from '../sqlite/quiesce.js';
import { restoreWalMode } from '../sqlite/wal-mode.js';

/**
 * A checkout found out of WAL mode as its session opens: another tool set journal_mode on it at rest, or left a
 * rollback journal beside it. Nothing was capturing it, so nothing was missed. It is put back in WAL mode (a hot
 * journal rolled back first); what it holds beyond the durable head, if anything, is kept as an undo branch
 * (`<branch>-pre-reopen`), and the head is re-materialized either way, so the session starts from exactly the head.
 * `ref` is the one the session's lease was written in. Returns what the open must say; [] when the checkout is in WAL
 * mode (or there is none).
 */
export async function resetJournalMode(ctx: OpsContext, t: Target, ref: Ref): Promise<string[]> {
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (!existsSync(path)) return [];
  const breach = breachOfClosed(path);
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
        `to take them, close the session and run 'offshoot promote ${t.db}@${kept.branch} --onto ${t.branch}${ref.protected ? ' --force' : ''}'`;
  ctx.warn(message);
  return [message];
}
