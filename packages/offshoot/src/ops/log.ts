import { fail } from '../core/errors.js';
import { endsIncarnation, type LogActor, type LogRecord } from '../core/history.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import type { OpsContext } from './helpers/context/context.js';
import { type Incarnation, openBranchLog, walkNewestFirst } from './helpers/history/branch-log.js';

// Where a checkpoint or moment of a branch lands (its lineage and txid), read as every target-taking verb reads it.
export { type Point, resolvePoint } from './helpers/history/point.js';

/** Which records `log` returns: those since a time, of one actor, at most so many (the newest). */
export interface LogOptions {
  since?: Date;
  actor?: LogActor;
  /** The newest this many records that pass the filters; 0 for all. Default DEFAULT_LOG_LIMIT. */
  limit?: number;
}

/** The records a log returns when the caller names no limit. */
export const DEFAULT_LOG_LIMIT = 100;

/** What `log` found: the records, oldest first, and what else the name's history holds. */
export interface LogReport {
  db: string;
  branch: string;
  /** The incarnation the records are of; undefined when the branch has no log (see `note`). */
  logId: string | undefined;
  /** False when the branch does not exist now: the records are of its last incarnation, destroyed. */
  live: boolean;
  records: LogRecord[];
  /** True when the limit left older matching records out. */
  truncated: boolean;
  /** The destroy or reap record that ended the incarnation read, when it ended. */
  destroyed?: LogRecord;
  /** Earlier incarnations of the name (destroyed), newest first. */
  earlier: Incarnation[];
}

/**
 * `offshoot log db[@branch]`: the history of a branch, from its log: every verb that changed its ref, with who asked
 * and through what. Reads the ref's tail and only as many log objects, newest first, as the filters and the limit
 * need. A branch that no longer exists reads as the last incarnation of its name, whose final record says who
 * destroyed it, for as long as GC keeps it; NOT_FOUND when the name has no history at all.
 */
export async function readLog(ctx: OpsContext, t: Target, opts: LogOptions = {}, ref?: Ref | null): Promise<LogReport> {
  validateName('database', t.db);
  validateName('branch', t.branch);
  const limit = opts.limit ?? DEFAULT_LOG_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw fail('INVALID_ARGUMENT', `log: limit must be a whole number of records, not ${limit}`, {
      hint: 'pass --limit N (0 for every record)',
      hints: {
        agent: 'pass limit as a whole number (0 for every record)',
        sdk: 'pass limit as a whole number (0 for all)',
      },
    });
  // `ref`: the caller's read of the branch (null: it does not exist), else read here, before the log is listed.
  const log = await openBranchLog(ctx, t.db, t.branch, ref);
  if (!log.live && log.logId === undefined)
    throw fail('NOT_FOUND', `no branch ${t.db}@${t.branch}, and no log of one`, {
      hint: `run 'offshoot status ${t.db}' to list its branches`,
      hints: { agent: `offshoot_list lists the branches of ${t.db}` },
    });
  const since = opts.since?.getTime();
  const out: LogRecord[] = [];
  let truncated = false;
  let destroyed: LogRecord | undefined;
  let newest = true;
  await walkNewestFirst(
    ctx,
    log,
    (r) => {
      if (newest && endsIncarnation(r)) destroyed = r;
      newest = false;
      if (since !== undefined && Date.parse(r.at) < since) return false;
      if (opts.actor !== undefined && r.actor !== opts.actor) return true;
      if (limit > 0 && out.length >= limit) {
        truncated = true;
        return false;
      }
      out.push(r);
      return true;
    },
    (o) => since !== undefined && o.lastAtMs < since,
  );
  return {
    db: t.db,
    branch: t.branch,
    logId: log.logId,
    live: log.live,
    records: out.reverse(),
    truncated,
    ...(destroyed !== undefined ? { destroyed } : {}),
    earlier: log.others,
  };
}

/** A record as every surface shows it in JSON: the record, with its db and branch, and `meta` always present. */
export function logRecordDocument(db: string, branch: string, r: LogRecord): Record<string, unknown> {
  return { db, branch, ...r, meta: r.meta ?? {} };
}

/** The whole report as JSON (the CLI's --json, the wire's `log` result, the MCP tool's structured result). */
export function logDocument(r: LogReport): Record<string, unknown> {
  return {
    db: r.db,
    branch: r.branch,
    log_id: r.logId ?? null,
    live: r.live,
    truncated: r.truncated,
    records: r.records.map((x) => logRecordDocument(r.db, r.branch, x)),
    ...(r.destroyed !== undefined ? { destroyed: logRecordDocument(r.db, r.branch, r.destroyed) } : {}),
    earlier: r.earlier.map((i) => ({ log_id: i.logId, records: i.last, last_at: i.lastAt.toISOString() })),
  };
}

// The fields a line shows after the txids, in this order, then the actor's tags.
const DETAIL_FIELDS = ['name', 'from', 'undo', 'ttl', 'pages', 'bytes', 'discarded'] as const;

/** One record as a line of text: time, sequence, op, txids, who and through what, then what it says besides. */
export function logRecordLine(r: LogRecord): string {
  const txids = r.txid_before === r.txid_after ? `txid ${r.txid_after}` : `txid ${r.txid_before}->${r.txid_after}`;
  const details = DETAIL_FIELDS.filter((f) => r[f] !== undefined).map((f) => `${f}=${String(r[f])}`);
  const tags = Object.entries(r.meta ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return [r.at, `#${r.seq}`, r.op.padEnd(10), txids, `${r.actor} ${r.surface}`, ...details, ...tags].join('  ');
}
