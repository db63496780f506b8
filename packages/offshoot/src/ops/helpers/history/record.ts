import { encodeLogRecords, LIBRARY_SURFACE, type LogOp, type NewLogRecord, planAppend } from '../../../core/history.js';
import { logObjectKey } from '../../../core/keys.js';
import type { Ref } from '../../../core/ref.js';
import { nodeCrypto } from '../../../platform/node-crypto.js';
import type { OpsContext } from '../context/context.js';

/** What a verb says of its change beyond the op: the fields of a record that are not derived from the refs. */
export type RecordDetail = Partial<Omit<NewLogRecord, 'op' | 'at' | 'actor' | 'surface' | 'lineage'>>;

/** A fresh log id: 16 hex digits, one per incarnation of a branch. */
function newLogId(): string {
  return nodeCrypto().randomBytes(8).toString('hex');
}

// The record of `op` moving a branch from `before` (undefined: it did not exist) to `next`, with who asked.
function newRecord(
  ctx: OpsContext,
  op: LogOp,
  before: Ref | undefined,
  next: Ref,
  detail: RecordDetail = {},
): NewLogRecord {
  const origin = ctx.origin;
  return {
    op,
    at: ctx.now().toISOString(),
    actor: origin?.actor ?? 'human',
    surface: origin?.surface ?? LIBRARY_SURFACE,
    lineage: next.lineage,
    txid_before: before?.head_txid ?? 0,
    txid_after: next.head_txid,
    ...(origin?.meta !== undefined && Object.keys(origin.meta).length > 0 ? { meta: origin.meta } : {}),
    ...detail,
  };
}

/*
 * `next` (derived from the committed ref, so its tail is the committed one) with `record` appended to its log, ready
 * for the compare-and-swap that makes both durable at once. A ref with no log starts one (a new id); a full tail is
 * first spilled into its log object, create-only, before that compare-and-swap: its records are committed, so a
 * spill whose swap is then lost leaves only a copy of records a reader already has, and a retry writes the same key.
 */
async function appendRecord(
  ctx: OpsContext,
  db: string,
  branch: string,
  next: Ref,
  record: NewLogRecord,
): Promise<Ref> {
  const logId = next.log_id ?? newLogId();
  const plan = planAppend(next.log_id === undefined ? [] : (next.log ?? []), record);
  const spill = plan.spill;
  if (spill !== undefined && spill.length > 0) {
    const first = spill[0]?.seq ?? 1;
    const last = spill.at(-1);
    const lastAt = Date.parse(last?.at ?? '');
    const key = logObjectKey(db, branch, logId, first, last?.seq ?? first, Number.isFinite(lastAt) ? lastAt : 0);
    await ctx.store.putLogObject(key, encodeLogRecords(spill));
  }
  return { ...next, log_id: logId, log: plan.tail };
}

/**
 * appendRecord of the record of `op` (newRecord): what a verb calls just before its compare-and-swap. With no
 * `before` the ref starts a new incarnation, whatever log the ref it was copied from had.
 */
export function logged(
  ctx: OpsContext,
  db: string,
  branch: string,
  op: LogOp,
  before: Ref | undefined,
  next: Ref,
  detail: RecordDetail = {},
): Promise<Ref> {
  const ref = before === undefined ? withoutLog(next) : next;
  return appendRecord(ctx, db, branch, ref, newRecord(ctx, op, before, ref, detail));
}

// A copy of r with no log: what a new incarnation copied from another ref starts from.
function withoutLog(r: Ref): Ref {
  const next = { ...r };
  delete next.log_id;
  delete next.log;
  return next;
}
