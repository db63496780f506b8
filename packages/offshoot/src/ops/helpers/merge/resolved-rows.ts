import { type ErrorCode, fail, type OffshootError } from '../../../core/errors.js';
import { jsonRow, jsonValue, sqlValueOf } from '../../../sqlite/diff/diff-json.js';
import type { Row } from '../../../sqlite/diff/diff-types.js';

/**
 * A conflict the caller resolved: the conflicting row's table and key, exactly as the merge's conflict report gives
 * them, and the full row to write there (null: the row is deleted). Values are in diff's JSON encoding (diffToJson).
 */
export interface ResolvedRow {
  table: string;
  key: Record<string, unknown>;
  row: Record<string, unknown> | null;
}

/** One resolved row read: its place in the caller's list, its key and the row to write (undefined: delete). */
export interface ResolvedEntry {
  index: number;
  table: string;
  key: Row;
  row: Row | undefined;
}

/** The caller's resolved rows by table, then by key (keyOf). */
export type Resolution = Map<string, Map<string, ResolvedEntry>>;

/** A table as resolved rows must name it: its key columns (a conflict's key) and every column a row has. */
export interface ResolvableTable {
  key: readonly string[];
  columns: readonly string[];
}

/** How each surface names the resolved rows, for the hints of their refusals. */
const WHERE = { cli: 'the --resolve file', agent: 'resolved', sdk: 'resolved' } as const;

function refuse(code: ErrorCode, message: string, fix: (where: string) => string): OffshootError {
  return fail(code, message, {
    hint: fix(WHERE.cli),
    hints: { agent: fix(WHERE.agent), sdk: fix(WHERE.sdk) },
  });
}

/** The key of a row, as its key columns' values in JSON: the identity a conflict and a resolved row share. */
export function keyOf(key: readonly string[], row: Row): string {
  return JSON.stringify(key.map((k) => jsonValue(row[k])));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The resolved rows of a document the caller wrote: a JSON array of `{table, key, row}`, or an object holding one
 * as `resolved` (as the merge op and the MCP tool take it). INVALID_ARGUMENT naming the first entry out of shape.
 */
export function readResolved(doc: unknown): ResolvedRow[] {
  const list = isObject(doc) && 'resolved' in doc ? doc.resolved : doc;
  if (!Array.isArray(list))
    throw refuse(
      'INVALID_ARGUMENT',
      'resolved rows must be a JSON array of {"table", "key", "row"}, or an object holding one as "resolved"',
      (w) => `write ${w} as [{"table": "t", "key": {"id": 1}, "row": {"id": 1, "v": "kept"}}]`,
    );
  return list.map((e, i) => {
    if (!isObject(e) || typeof e.table !== 'string' || !isObject(e.key) || !(e.row === null || isObject(e.row)))
      throw refuse(
        'INVALID_ARGUMENT',
        `resolved row ${i + 1} is not {"table": string, "key": object, "row": object or null}: ${JSON.stringify(e)}`,
        (w) =>
          `give each entry of ${w} a table, the key the conflict report shows, and the row to write (null deletes it)`,
      );
    return { table: e.table, key: e.key, row: e.row as Record<string, unknown> | null };
  });
}

function decodeRow(o: Record<string, unknown>, what: string): Row {
  const out: Row = {};
  for (const [col, v] of Object.entries(o)) {
    try {
      out[col] = sqlValueOf(v);
    } catch (err) {
      throw refuse(
        'INVALID_ARGUMENT',
        `${what}, column ${col}: ${(err as Error).message}`,
        (w) => `write the values in ${w} as the conflict report does (a BLOB as {"$blob": "<hex>"})`,
      );
    }
  }
  return out;
}

function label(e: Pick<ResolvedEntry, 'index' | 'table'>, key: Record<string, unknown>): string {
  return `resolved row ${e.index + 1} (${e.table} ${JSON.stringify(key)})`;
}

/**
 * The caller's resolved rows checked against the tables they name (`tables`: undefined for a table the merged
 * database does not have) and read into a Resolution. INVALID_ARGUMENT for an unknown table, a key that is not the
 * table's key columns, a column the table does not have or a row missing one, a row whose key columns differ from
 * its key, or a key named twice.
 */
export function resolution(
  rows: readonly ResolvedRow[],
  tables: ReadonlyMap<string, ResolvableTable | undefined>,
): Resolution {
  const out: Resolution = new Map();
  rows.forEach((r, index) => {
    const what = label({ index, table: r.table }, r.key);
    const t = tables.get(r.table);
    if (t === undefined)
      throw refuse(
        'INVALID_ARGUMENT',
        `${what}: the merged database has no table ${JSON.stringify(r.table)}`,
        (w) => `name a table of a conflict in ${w}, as the conflict report spells it`,
      );
    if (t.key.length === 0)
      throw refuse(
        'INVALID_ARGUMENT',
        `${what}: ${r.table} has no primary key, so a merge has no conflicting row of it`,
        (w) => `name a table of a conflict in ${w}, as the conflict report spells it`,
      );
    const keyCols = Object.keys(r.key);
    if (keyCols.length !== t.key.length || !t.key.every((k) => keyCols.includes(k)))
      throw refuse(
        'INVALID_ARGUMENT',
        `${what}: the key of ${r.table} is ${t.key.join(', ')}, not ${keyCols.join(', ') || 'nothing'}`,
        (w) => `give each key in ${w} exactly the key columns the conflict report shows (${t.key.join(', ')})`,
      );
    const key = decodeRow(r.key, what);
    let row: Row | undefined;
    if (r.row !== null) {
      row = decodeRow(r.row, what);
      const cols = Object.keys(row);
      const unknown = cols.filter((c) => !t.columns.includes(c));
      const missing = t.columns.filter((c) => !cols.includes(c));
      if (unknown.length + missing.length > 0)
        throw refuse(
          'INVALID_ARGUMENT',
          `${what}: ${unknown.length > 0 ? `${r.table} has no column ${unknown.join(', ')}` : `the row has no ${missing.join(', ')}`}`,
          (w) =>
            `give each row in ${w} every column of ${r.table} and no other (${t.columns.join(', ')}), or null to delete it`,
        );
      if (keyOf(t.key, row) !== keyOf(t.key, key))
        throw refuse(
          'INVALID_ARGUMENT',
          `${what}: the row's key columns differ from its key (${t.key.map((c) => `${c} ${JSON.stringify(jsonValue(row?.[c]))}`).join(', ')})`,
          (w) =>
            `keep each row's key columns in ${w} as its key has them (a merge resolves a row, it does not move it)`,
        );
    }
    const byKey = out.get(r.table) ?? new Map<string, ResolvedEntry>();
    const k = keyOf(t.key, key);
    if (byKey.has(k))
      throw refuse(
        'INVALID_ARGUMENT',
        `${what}: that row is resolved twice`,
        (w) => `resolve each conflicting row once in ${w}`,
      );
    byKey.set(k, { index, table: r.table, key, row });
    out.set(r.table, byKey);
  });
  return out;
}

/** INVALID_ARGUMENT for the first resolved row that names no conflict of the merge (`matched`: those that did). */
export function refuseUnmatched(res: Resolution, matched: ReadonlySet<ResolvedEntry>): void {
  for (const byKey of res.values())
    for (const e of byKey.values()) {
      if (matched.has(e)) continue;
      throw refuse(
        'INVALID_ARGUMENT',
        `${label(e, jsonRow(e.key))} names no conflicting row of this merge; nothing was merged`,
        (w) => `keep in ${w} only rows the merge lists as conflicts (merge without it to list them)`,
      );
    }
}
