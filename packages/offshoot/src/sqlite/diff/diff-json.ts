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

function jsonRow(r: Row): JsonRow {
  const out: JsonRow = {};
  for (const [k, v] of Object.entries(r)) out[k] = jsonValue(v);
  return out;
}

function jsonValue(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : { $int: v.toString() };
  if (typeof v === 'number') return Number.isFinite(v) ? v : { $real: String(v) };
  if (typeof v === 'string') return v;
  return { $blob: blobHex(v as Uint8Array) };
}
