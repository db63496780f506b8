// The child process one offshoot_query runs in: a runaway statement is ended by killing this process, since a
// synchronous SQLite step cannot be interrupted from JavaScript.
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';

/** What the parent sends. */
export interface QueryJob {
  file: string;
  sql: string;
  limit: number;
}

/** What the child answers: rows, or an error message with the SQLite code. */
export type QueryAnswer =
  | { ok: true; columns: string[]; rows: unknown[][]; truncated: boolean }
  | { ok: false; message: string; readOnly?: false };

const MAX_TEXT = 4096;

/** A JSON-safe cell: integers beyond 2^53 as strings, BLOBs summarised, long text cut. */
function cell(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (Buffer.isBuffer(v))
    return {
      blob: v.length,
      sha256: createHash('sha256').update(v).digest('hex').slice(0, 16),
      hex: v.subarray(0, 16).toString('hex'),
    };
  if (typeof v === 'string' && v.length > MAX_TEXT)
    return `${v.slice(0, MAX_TEXT)}… (${v.length - MAX_TEXT} more characters)`;
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}

function run(job: QueryJob): QueryAnswer {
  const db = new Database(job.file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('query_only = ON');
    const stmt = db.prepare(job.sql);
    if (!stmt.readonly) return { ok: false, message: 'the statement would write', readOnly: false };
    if (!stmt.reader) return { ok: true, columns: [], rows: [], truncated: false };
    stmt.safeIntegers(true).raw(true);
    const columns = stmt.columns().map((c) => c.name);
    const rows: unknown[][] = [];
    let truncated = false;
    for (const r of stmt.iterate() as IterableIterator<unknown[]>) {
      if (rows.length === job.limit) {
        truncated = true;
        break;
      }
      rows.push(r.map(cell));
    }
    return { ok: true, columns, rows, truncated };
  } finally {
    db.close();
  }
}

// The parent starts the clock when this says it is ready, so process start-up never counts against the query.
process.send?.({ ready: true });
process.once('message', (job: QueryJob) => {
  let answer: QueryAnswer;
  try {
    answer = run(job);
  } catch (err) {
    answer = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  process.send?.(answer, () => process.exit(0));
});
