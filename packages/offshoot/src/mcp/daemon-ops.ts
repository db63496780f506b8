import type { DestroyResult, PromoteResult, RollbackResult, WireResponse } from '@offshoot/client';
import { fail } from '../core/errors.js';
import type { CheckoutWork } from '../ops/destroy.js';
import type { LinkedDaemon } from './daemon-probe.js';

/**
 * Rollback, promote and destroy through the daemon serving the store, answered in the shape the tools read at rest.
 * The connection says who asks (the agent, and whether its human let it force), so the daemon applies the same
 * policy the verbs apply at rest; what the op warned of lands in `notes`, as an at-rest op's warnings do.
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

/** The `result` of an ok response; a daemon too old to send one is named, since the change itself was made. */
function resultOf<T>(res: WireResponse, d: LinkedDaemon, op: string): T {
  if (typeof res.result === 'object' && res.result !== null) return res.result as T;
  throw fail('UNSUPPORTED', `the daemon on ${d.socket} did the ${op} but is too old to report its result`, {
    hint: "look at the branch (offshoot_list); restart 'offshoot serve' with this version of offshoot",
  });
}

/** The op's warnings other than the failed refresh (which the tool reports itself), into the call's notes. */
function noteWarnings(res: WireResponse, refreshError: string | undefined, notes: string[]): void {
  for (const w of res.warnings ?? []) if (w !== refreshError) notes.push(w);
}

/** `rollback` through the daemon. */
export async function rollbackThrough(
  d: LinkedDaemon,
  db: string,
  branch: string,
  to: string,
  notes: string[],
): Promise<Repointed & { abandoned: { from: number; to: number } | undefined }> {
  const res = await d.client.request({ op: 'rollback', db, branch, name: to });
  const r = resultOf<RollbackResult>(res, d, 'rollback');
  noteWarnings(res, r.refresh_error, notes);
  return {
    txid: r.txid,
    backup: r.backup,
    ...(r.earlier_backup !== undefined ? { earlierBackup: r.earlier_backup } : {}),
    abandoned: r.abandoned ?? undefined,
    path: res.checkout ?? '',
    refreshed: r.refreshed,
    ...(r.refresh_error !== undefined ? { refreshError: new Error(r.refresh_error) } : {}),
  };
}

/** `promote` through the daemon, which flushes a source session of its own first. */
export async function promoteThrough(
  d: LinkedDaemon,
  db: string,
  source: string,
  target: string,
  opts: { force: boolean; ifHead: number | undefined },
  notes: string[],
): Promise<Repointed & { sourceLive: boolean }> {
  const { force, ifHead } = opts;
  const res = await d.client.request({
    op: 'promote',
    db,
    branch: source,
    name: target,
    force,
    ...(ifHead !== undefined ? { if_head: ifHead } : {}),
  });
  const r = resultOf<PromoteResult>(res, d, 'promote');
  noteWarnings(res, r.refresh_error, notes);
  if (ifHead !== undefined && r.if_head !== ifHead)
    throw fail('UNSUPPORTED', `the daemon on ${d.socket} promoted without checking if_head: it is too old to know it`, {
      hint: `the previous ${target} is kept as ${r.backup}; restart 'offshoot serve' with this version of offshoot`,
    });
  return {
    txid: r.txid,
    backup: r.backup,
    ...(r.earlier_backup !== undefined ? { earlierBackup: r.earlier_backup } : {}),
    path: r.checkout,
    refreshed: r.refreshed,
    sourceLive: r.source_live,
    ...(r.refresh_error !== undefined ? { refreshError: new Error(r.refresh_error) } : {}),
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
  const res = await d.client.request({ op: 'destroy', db, branch, force });
  const r = resultOf<DestroyResult>(res, d, 'destroy');
  noteWarnings(res, undefined, notes);
  const w = r.discarded;
  return {
    removedCheckout: r.removed_checkout,
    ...(w !== undefined
      ? {
          discarded: {
            reason: w.reason,
            ...(w.since_txid !== undefined ? { sinceTxid: w.since_txid } : {}),
            lastWrite: w.last_write,
            walBytes: w.wal_bytes,
          },
        }
      : {}),
  };
}
