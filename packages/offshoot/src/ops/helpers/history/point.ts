import { fail, hasCode } from '../../../core/errors.js';
import { changesState, type LogRecord } from '../../../core/history.js';
import { formatDuration, msDuration } from '../../../core/duration.js';
import { type Moment, parseMoment } from '../../../core/moment.js';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import { historyWindowMs, readStoreConfig } from '../../../store/store-config.js';
import { checkpointTxid } from './checkpoint-txid.js';
import type { OpsContext } from '../context/context.js';
import { openBranchLog, walkNewestFirst } from './branch-log.js';

/** A durable state of a branch: where a chain resolves from. */
export interface Point {
  lineage: string;
  txid: number;
  /** Set when a moment named it: the moment as given, and the record it resolved through (none: the ancestry). */
  moment?: { text: string; record?: LogRecord };
}

/**
 * The state `name` names on db@branch, whose ref is `ref`: a checkpoint's, in the ref's own lineage, or a moment's
 * (`tx:42`, `at:<RFC 3339>`), resolved through the branch's log (see resolveMoment).
 */
export async function resolvePoint(ctx: OpsContext, t: Target, ref: Ref, name: string): Promise<Point> {
  const moment = parseMoment(name);
  if (moment === undefined) return { lineage: ref.lineage, txid: checkpointTxid(ref, t, name) };
  return resolveMoment(ctx, t, ref, moment);
}

/** True when p is the ref's head: the same lineage and txid. */
export function isHead(p: Point, ref: Ref): boolean {
  return p.lineage === ref.lineage && p.txid === ref.head_txid;
}

/**
 * The state a moment names, from the log: `tx:N` is the newest record that left the branch at txid N (a txid a
 * rollback or promote made again names the latest state of that number), `at:T` the newest record at or before T.
 * A txid no record names (the branch's history before its log, or before its fork) is read through its current
 * ancestry. Refused, NOT_FOUND with the way on: a moment the branch never had, one outside the history window of its
 * database, one whose objects GC has collected.
 */
export async function resolveMoment(ctx: OpsContext, t: Target, ref: Ref, moment: Moment): Promise<Point> {
  const name = `${t.db}@${t.branch}@${moment.text}`;
  const log = await openBranchLog(ctx, t.db, t.branch, ref);
  let found: LogRecord | undefined;
  let newer: LogRecord | undefined;
  let oldest: LogRecord | undefined;
  const target = moment.kind === 'at' ? moment.at.getTime() : undefined;
  await walkNewestFirst(
    ctx,
    log,
    (r) => {
      if (!changesState(r)) return true;
      oldest = r;
      const hit = moment.kind === 'tx' ? r.txid_after === moment.txid : Date.parse(r.at) <= (target ?? 0);
      if (hit) {
        found = r;
        return false;
      }
      newer = r;
      return true;
    },
    // By time, an object whose older neighbour already ends after the moment holds only later records.
    (_o, older) => target !== undefined && older !== undefined && older.lastAtMs > target,
  );
  let point: Point;
  if (found !== undefined) {
    await refuseOutsideWindow(ctx, t, name, newer);
    point = { lineage: found.lineage, txid: found.txid_after, moment: { text: moment.text, record: found } };
  } else if (moment.kind === 'tx' && moment.txid <= ref.head_txid) {
    point = { lineage: ref.lineage, txid: moment.txid, moment: { text: moment.text } };
  } else {
    throw neverHad(t, name, moment, ref, oldest);
  }
  await refuseGone(ctx, t, name, point);
  return point;
}

/** NOT_FOUND for a moment before the branch's log (or after its head), naming what it does hold. */
function neverHad(t: Target, name: string, moment: Moment, ref: Ref, oldest: LogRecord | undefined): Error {
  const branch = `${t.db}@${t.branch}`;
  if (moment.kind === 'tx')
    return fail(
      'NOT_FOUND',
      `no state ${name}: ${branch} never was at txid ${moment.txid} (its head is txid ${ref.head_txid})`,
      {
        hint: `run 'offshoot log ${branch}' to see the txids it was at`,
        hints: {
          agent: `offshoot_log lists the txids ${branch} was at`,
          sdk: `read the log of ${branch} for the txids it was at`,
        },
      },
    );
  const began =
    oldest === undefined
      ? 'it has no log yet'
      : `its log begins at ${oldest.at} (${oldest.op}${oldest.from !== undefined ? ` of ${oldest.from}` : ''})`;
  const parent =
    oldest?.op === 'fork' && typeof oldest.from === 'string' ? oldest.from.split('@').slice(0, 2).join('@') : undefined;
  return fail('NOT_FOUND', `no state ${name}: ${branch} has no durable state that early; ${began}`, {
    hint:
      parent !== undefined
        ? `address the branch it was forked from at that time, ${parent}@${moment.text}`
        : `run 'offshoot log ${branch}' to see when its history begins`,
  });
}

/**
 * Refuses a state that stopped being the branch's before its database's history window began: GC keeps every state
 * the window reaches, and only those, so one older may be gone at any moment. `newer` is the record that replaced it.
 */
async function refuseOutsideWindow(
  ctx: OpsContext,
  t: Target,
  name: string,
  newer: LogRecord | undefined,
): Promise<void> {
  if (newer === undefined) return;
  const { config } = await readStoreConfig(ctx.store.backend);
  const windowMs = historyWindowMs(config, t.db);
  const start = ctx.now().getTime() - windowMs;
  if (Date.parse(newer.at) >= start) return;
  const w = formatDuration(msDuration(windowMs));
  throw fail('NOT_FOUND', `${name} is outside the history window of ${t.db} (${w}): that state ended at ${newer.at}`, {
    hint: `name a checkpoint instead, or widen the window for what comes: 'offshoot config ${t.db} history_window=168h'`,
    hints: {
      agent: `name a checkpoint instead, or ask the human to widen the history window of ${t.db}`,
      sdk: `name a checkpoint instead, or widen the history window of ${t.db} (offshoot config)`,
    },
  });
}

/** Refuses a state whose chain no longer resolves: GC collected what it was made of. */
async function refuseGone(ctx: OpsContext, t: Target, name: string, p: Point): Promise<void> {
  try {
    await new ChainResolver(ctx.store, { sizes: false }).resolve(p.lineage, p.txid);
  } catch (err) {
    if (!hasCode(err, 'CORRUPT') && !hasCode(err, 'NOT_FOUND')) throw err;
    throw fail('NOT_FOUND', `${name} is gone: the objects of that state were collected (txid ${p.txid})`, {
      hint: `name a checkpoint or a moment inside the history window of ${t.db} ('offshoot config ${t.db}' shows it)`,
      hints: { agent: `name a checkpoint, or a more recent moment of ${t.db}@${t.branch}` },
      cause: err,
    });
  }
}
