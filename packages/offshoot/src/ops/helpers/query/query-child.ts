// The child process one offshoot_query runs in: a runaway statement is ended by killing this process, since a
// synchronous SQLite step cannot be interrupted from JavaScript.
import { createHash } from 'node:crypto';
import { openDatabase } from '../../../sqlite/sqlite-driver.js';
import { sqliteCode } from '../../../sqlite/sqlite-result-codes.js';
import { wholeTextReader } from '../../../sqlite/whole-text.js';

/** What the parent sends. */
export interface QueryJob {
  file: string;
  sql: string;
  /** Most rows to return. */
  limit: number;
  /** Most bytes of rows to return, counted as their JSON. */
  maxBytes: number;
}

/** What the child answers: rows (cut at `truncated` by the row or the byte cap), or an error message. */
export type QueryAnswer =
  | { ok: true; columns: string[]; rows: unknown[][]; truncated: boolean; truncatedBy?: 'rows' | 'bytes' }
  | { ok: false; message: string; readOnly?: false };

const MAX_TEXT = 4096;

/** A JSON-safe cell: integers beyond 2^53 as strings, BLOBs summarised, long text cut. */
function cell(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Uint8Array)
    return {
      blob: v.length,
      sha256: createHash('sha256').update(v).digest('hex').slice(0, 16),
      hex: Buffer.from(v.buffer, v.byteOffset, Math.min(v.byteLength, 16)).toString('hex'),
    };
  if (typeof v === 'string' && v.length > MAX_TEXT)
    return `${v.slice(0, MAX_TEXT)}… (${v.length - MAX_TEXT} more characters)`;
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}

/** About what a cell takes in the answer's JSON. */
function cellBytes(v: unknown): number {
  if (typeof v === 'string') return v.length + 3;
  if (v !== null && typeof v === 'object') return 96;
  return 22;
}

// A statement that would write fails its first step on a read-only, query_only connection, before any row: SQLite
// says SQLITE_READONLY. A bare reporting PRAGMA that SQLite marks as a writer (journal_mode) still reports there.
function run(job: QueryJob): QueryAnswer {
  const db = openDatabase(job.file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('query_only = ON');
    const stmt = db.prepare(job.sql);
    const columns = stmt.columns().map((c) => c.name);
    if (columns.length === 0) {
      stmt.run();
      return { ok: true, columns: [], rows: [], truncated: false };
    }
    const whole = wholeTextReader(db, job.sql, columns.length);
    const reader = (whole?.stmt ?? stmt).safeIntegers(true).raw(true);
    const rows: unknown[][] = [];
    let bytes = 0;
    for (const r of reader.iterate() as IterableIterator<unknown[]>) {
      if (rows.length === job.limit) return { ok: true, columns, rows, truncated: true, truncatedBy: 'rows' };
      const row = (whole?.values(r) ?? r).map(cell);
      bytes += row.reduce((n: number, v) => n + cellBytes(v), 2);
      // The answer crosses a pipe and then the caller's context: a wide result stops at the byte cap.
      if (bytes > job.maxBytes) return { ok: true, columns, rows, truncated: true, truncatedBy: 'bytes' };
      rows.push(row);
    }
    return { ok: true, columns, rows, truncated: false };
  } catch (err) {
    if (sqliteCode(err)?.startsWith('SQLITE_READONLY') === true)
      return { ok: false, message: 'the statement would write', readOnly: false };
    throw err;
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
