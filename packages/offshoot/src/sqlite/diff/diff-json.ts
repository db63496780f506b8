import type { DiffResult, Row, TableDiff } from './diff-types.js';
import type { RowCounts } from './row-window.js';
import { blobHex } from './sql-value.js';

/** A JSON-safe stored value: see diffToJson for the encoding. */
export type JsonValue = null | number | string | { $blob: string } | { $int: string } | { $real: string };

/** A JSON-safe row. */
export type JsonRow = Record<string, JsonValue>;

/** The JSON shape of one table's diff. */
export interface JsonTableDiff {
  table: string;
  key: string[];
  status: TableDiff['status'];
  left_count?: number;
  right_count?: number;
  added: JsonRow[];
  removed: JsonRow[];
  changed: Array<{ key: JsonRow; before: JsonRow; after: JsonRow }>;
  /** How many row changes of each kind, when a row limit listed only some of them. */
  counts?: RowCounts;
}

/** The JSON shape of a whole diff. */
export interface JsonDiff {
  schema: DiffResult['schema'];
  tables: JsonTableDiff[];
  stats: { tables_compared: number; rows_scanned: number; narrowed: boolean };
  summary_only: boolean;
}

/**
 * Converts a diff to a JSON-safe object. Values: NULL → null; TEXT → string; INTEGER → number when it is a safe
 * integer, else {"$int": "<decimal>"}; REAL → number (±Infinity → {"$real": "Infinity"|"-Infinity"}); BLOB →
 * {"$blob": "<lowercase hex>"}. An integral REAL and an INTEGER both become plain numbers.
 */
export function diffToJson(result: DiffResult): JsonDiff {
  return {
    schema: result.schema,
    summary_only: result.summaryOnly,
    stats: {
      tables_compared: result.stats.tablesCompared,
      rows_scanned: result.stats.rowsScanned,
      narrowed: result.stats.narrowed,
    },
    tables: result.tables.map((t) => {
      const out: JsonTableDiff = {
        table: t.table,
        key: t.key,
        status: t.status,
        added: t.added.map(jsonRow),
        removed: t.removed.map(jsonRow),
        changed: t.changed.map((c) => ({ key: jsonRow(c.key), before: jsonRow(c.before), after: jsonRow(c.after) })),
      };
      if (t.counts !== undefined) out.counts = { ...t.counts };
      if (t.leftCount !== undefined) out.left_count = t.leftCount;
      if (t.rightCount !== undefined) out.right_count = t.rightCount;
      return out;
    }),
  };
}

/** One row as JSON: see diffToJson for the encoding of its values. */
export function jsonRow(r: Row): JsonRow {
  const out: JsonRow = {};
  for (const [k, v] of Object.entries(r)) out[k] = jsonValue(v);
  return out;
}

/** One stored value as JSON: see diffToJson for the encoding. */
export function jsonValue(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : { $int: v.toString() };
  if (typeof v === 'number') return Number.isFinite(v) ? v : { $real: String(v) };
  if (typeof v === 'string') return v;
  return { $blob: blobHex(v as Uint8Array) };
}

/**
 * The stored value a JSON value encodes (diffToJson's encoding, read back): null → NULL; a string → TEXT; an integral
 * number → INTEGER, any other → REAL; {"$int": "<decimal>"} → INTEGER; {"$real": "<number>"} → REAL (also
 * "Infinity", "-Infinity"); {"$blob": "<hex>"} → BLOB. Throws a TypeError naming what it could not read.
 */
export function sqlValueOf(v: unknown): unknown {
  if (v === null || typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`${v} is not a number JSON can carry`);
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const entries = Object.entries(v);
    const [tag, text] = entries[0] ?? [];
    if (entries.length === 1 && typeof text === 'string') {
      if (tag === '$int' && /^-?\d+$/.test(text)) return BigInt(text);
      if (tag === '$real' && text.trim() !== '' && !Number.isNaN(Number(text))) return Number(text);
      if (tag === '$blob' && /^(?:[0-9a-fA-F]{2})*$/.test(text)) return new Uint8Array(Buffer.from(text, 'hex'));
    }
  }
  throw new TypeError(
    `${JSON.stringify(v)} is not a stored value (write null, a number, a string, {"$int": "<decimal>"}, {"$real": "<number>"} or {"$blob": "<hex>"})`,
  );
}
