import type { KeptSide } from './kept-side.js';
import type { SqliteDatabase } from '../sqlite-database.js';
import type { RowCounts, RowWindows } from './row-window.js';
/** One row of a table, keyed by column name; values are as SQLite stores them (bigint, number, string, Uint8Array, null). */
export type Row = Record<string, unknown>;

/** The kind of schema object a change is about. */
export type SchemaObjectType = 'table' | 'index' | 'view' | 'trigger';

/** A schema object that exists on one or both sides with different DDL. */
export interface SchemaChange {
  type: SchemaObjectType;
  name: string;
  change: 'added' | 'removed' | 'changed';
  /** The left side's DDL (absent when added). */
  left?: string;
  /** The right side's DDL (absent when removed). */
  right?: string;
}

/** A right-side index or trigger whose DDL is the same on both sides but which SQL rendering must recreate. */
export interface DependentObject {
  type: 'index' | 'trigger';
  name: string;
  sql: string;
}

/** How SQL rendering rebuilds a table whose DDL differs, before applying its row changes. */
export interface TableRebuild {
  /** Columns both sides share, key included, carried over from the left; empty when the key changed and every row is replaced. */
  copy: string[];
  /** Right-only columns and the value each carried-over row gets; the row diff compared against exactly these values. */
  fill: Row;
  /** The right side's sqlite_sequence value for the table, restored after the rebuild; null when it has no row there. */
  sequence?: bigint | null;
}

/** The row-level difference of one table. */
export interface TableDiff {
  table: string;
  /** Primary key column names, or the rowid alias (`rowid`, else `_rowid_` or `oid`) for tables without an INTEGER PRIMARY KEY. */
  key: string[];
  leftCount?: number;
  rightCount?: number;
  added: Row[];
  removed: Row[];
  /** Rows present on both sides whose compared columns differ: full rows on each side. */
  changed: Array<{ key: Row; before: Row; after: Row }>;
  /**
   * How many row changes of each kind the table has, set when the diff kept only windows of them (DiffOptions.rows):
   * the lists above then hold the windows. Absent when every row change is listed (see rowCounts).
   */
  counts?: RowCounts;
  status: 'same' | 'changed' | 'added' | 'removed';
  /** Set when the table's DDL differs: SQL rendering drops and recreates it. */
  rebuild?: TableRebuild;
  /** Unchanged right-side triggers (and, for a rebuilt table, indexes) on this table, recreated around its row changes. */
  dependents?: DependentObject[];
  /** A virtual table's shadow table: its DDL belongs to the virtual table, which seeds it with rows of its own. */
  shadow?: boolean;
}

/** Work counters, so callers and tests can see that a diff scaled with the change rather than the database. */
export interface DiffStats {
  /** Tables whose rows were read (merge-joined, listed, or scanned for a first difference). */
  tablesCompared: number;
  /** Rows read from both sides together. */
  rowsScanned: number;
  /** True when changedPages narrowed the comparison (false when it was absent or could not be trusted). */
  narrowed: boolean;
  /** Database pages read, both sides together, to learn which tables own the changed pages (0 when not narrowed). */
  pagesRead: number;
  /**
   * Tables counted with COUNT(*), both sides together: O(table) each. A left count remembered from an earlier diff
   * of the same unchanged file (DiffOptions.leftKept) is not counted again.
   */
  tablesCounted: number;
}

/** The whole difference between two databases, left → right. */
export interface DiffResult {
  /** Schema changes in application order: removals in left schema order, then additions and changes in right schema order. */
  schema: SchemaChange[];
  /** One entry per ordinary (non-virtual) table on either side, sorted by name. */
  tables: TableDiff[];
  stats: DiffStats;
  /** True when made with summaryOnly: statuses and counts only, no rows (so no SQL can be rendered from it). */
  summaryOnly: boolean;
}

/** Options for diffDatabases. */
export interface DiffOptions {
  /** 1-based page numbers whose bytes differ between the two files; when given, only tables owning those pages are compared. */
  changedPages?: ReadonlySet<number> | undefined;
  /** Only decide each table's status and counts: stop at the first differing row and keep no rows. */
  summaryOnly?: boolean;
  /** Only these tables (each must exist on a side), with only the schema changes of them and their indexes and triggers. */
  tables?: readonly string[] | undefined;
  /** Cap on the rows kept, by their size as JSON: past it the diff fails TOO_LARGE (no cap when absent). */
  maxBytes?: number | undefined;
  /**
   * Which row changes of each table to keep, by kind (firstRows(n): the first n of each); the rest are counted, not
   * kept, so the cap bounds what is returned, never what is compared. Every row change when absent.
   */
  rows?: RowWindows | undefined;
  /** The diff is for SQL rendering, which needs every row: no windows, and TOO_LARGE suggests no row limit. */
  forSql?: boolean | undefined;
  /**
   * What earlier diffs of the very same unchanged left file (an immutable cache entry, a checkout proven clean) read
   * of it: its row counts, schema, table shapes and page placements, used instead of reading them again, and
   * filled with whatever this diff reads.
   */
  leftKept?: KeptSide | undefined;
  /**
   * Connections already open on a side's file inside a read transaction (a frozen checkout's), read in place of
   * opening one: the diff reads through it in that transaction, never writes or ends it, and leaves it open.
   */
  connections?: { left?: SqliteDatabase | undefined; right?: SqliteDatabase | undefined };
  /**
   * Raw descriptors the caller holds on a side's file (a frozen checkout's): page reads go through them and the diff
   * never closes them (their owner does, with its connection).
   */
  files?: { left?: number | undefined; right?: number | undefined };
}
