import { DaemonPlace, type DiscardedWork } from '@offshoot/client';
import type { CheckoutWork } from '../../ops/destroy.js';
import type { LinkedDaemon } from './daemon-probe.js';

/**
 * Rollback, promote and destroy through the daemon serving the store (the client's DaemonPlace), answered in the
 * shape the tools read at rest. The connection says who asks (the agent, and whether its human let it force), so
 * the daemon applies the same policy the verbs apply at rest; what the op warned of lands in `notes`, as an at-rest
 * op's warnings do.
 */

/** What a repoint reports, through the daemon or at rest. */
export interface Repointed {
  txid: number;
  backup: string;
  /** Where the earlier undo point was kept, when it held the only copy of its state. */
  earlierBackup?: string;
  path: string;
  refreshed: boolean;
  refreshError?: Error;
}

/** The op's warnings other than the failed refresh (which the tool reports itself), into the call's notes. */
function noteWarnings(warnings: string[], refreshError: string | undefined, notes: string[]): void {
  for (const w of warnings) if (w !== refreshError) notes.push(w);
}

/** The failed refresh a repoint reported, as the error an at-rest repoint carries. */
function refreshFailure(message: string | undefined): { refreshError?: Error } {
  return message === undefined ? {} : { refreshError: new Error(message) };
}

/** The earlier undo point a repoint kept aside, as an at-rest repoint reports it. */
function earlierKept(name: string | undefined): { earlierBackup?: string } {
  return name === undefined ? {} : { earlierBackup: name };
}

/** What a destroy discarded, as the at-rest destroy reports it. */
function discardedWork(w: DiscardedWork | undefined): { discarded?: CheckoutWork } {
  if (w === undefined) return {};
  return {
    discarded: {
      reason: w.reason,
      ...(w.since_txid !== undefined ? { sinceTxid: w.since_txid } : {}),
      lastWrite: w.last_write,
      walBytes: w.wal_bytes,
    },
  };
}

/** `rollback` through the daemon. */
export async function rollbackThrough(
  d: LinkedDaemon,
  db: string,
  branch: string,
  to: string,
  notes: string[],
): Promise<Repointed & { abandoned: { from: number; to: number } | undefined }> {
  const r = await new DaemonPlace(d.client).rollback(db, branch, to);
  noteWarnings(r.warnings, r.refresh_error, notes);
  return {
    txid: r.txid,
    backup: r.backup,
    ...earlierKept(r.earlier_backup),
    abandoned: r.abandoned ?? undefined,
    path: r.checkout,
    refreshed: r.refreshed,
    ...refreshFailure(r.refresh_error),
  };
}

/**
 * `promote` through the daemon, which flushes a source session of its own first; with `ifHead`, refused UNSUPPORTED
 * when the daemon's answer does not say it made the compare-and-swap (one too old to know it promotes anyway).
 */
export async function promoteThrough(
  d: LinkedDaemon,
  db: string,
  source: string,
  target: string,
  opts: { force: boolean; ifHead: number | undefined },
  notes: string[],
): Promise<Repointed & { sourceLive: boolean }> {
  const r = await new DaemonPlace(d.client).promote(db, source, target, opts);
  noteWarnings(r.warnings, r.refresh_error, notes);
  return {
    txid: r.txid,
    backup: r.backup,
    ...earlierKept(r.earlier_backup),
    path: r.checkout,
    refreshed: r.refreshed,
    sourceLive: r.source_live,
    ...refreshFailure(r.refresh_error),
  };
}

/** `destroy` through the daemon. */
export async function destroyThrough(
  d: LinkedDaemon,
  db: string,
  branch: string,
  force: boolean,
  notes: string[],
): Promise<{ removedCheckout: boolean; discarded?: CheckoutWork }> {
  const r = await new DaemonPlace(d.client).destroy(db, branch, { force });
  noteWarnings(r.warnings, undefined, notes);
  return { removedCheckout: r.removed_checkout, ...discardedWork(r.discarded) };
}
