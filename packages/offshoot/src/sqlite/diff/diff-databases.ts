import type { SqliteDatabase } from '../sqlite-database.js';
import { fail } from '../../core/errors.js';
import type {
  DependentObject,
  DiffOptions,
  DiffResult,
  DiffStats,
  Row,
  SchemaChange,
  TableDiff,
  TableRebuild,
} from './diff-types.js';
import { placeWith } from './btree-seek.js';
import { closeRawDb, openRawDb, type RawDbFile } from './btree-walk.js';
import { DiffBudget } from './diff-budget.js';
import { adoptDiffSide, hasPendingWal, openDiffSide } from './diff-connection.js';
import { fillValues } from './fill-values.js';
import { diffTableRows, leftCount } from './row-diff.js';
import { catalogOf, shapeOf } from './kept-side.js';
import { isStatTable, objectKey, readCatalog, type SchemaCatalog } from './schema-catalog.js';
import { diffSchema } from './schema-diff.js';
import { sqliteFailure } from './sqlite-failure.js';
import { changedRowids } from './row-narrowing.js';
import { windowLimit } from './row-window.js';
import { tablesOwningPages } from './table-pages.js';
import { readTableShape, type TableShape } from './table-shape.js';

/**
 * Diffs two SQLite files, left → right: schema objects by DDL text, and rows of every ordinary table by key.
 *
 * With `changedPages` (pages whose bytes differ between the files), only tables owning such a page on either side
 * (found by walking b-tree interior pages, or with dbstat when a changed page is not a b-tree page), tables whose
 * DDL differs, and tables whose b-tree root pages moved are read; the rest are reported `same` without reading
 * rows — and without counts, except in summary mode, where an untouched table is counted once, on the left, and
 * that count is shown for both sides. changedPages is ignored (everything is
 * compared) when the page sizes differ or either file has a non-empty -wal, since then file pages are not the
 * database's pages.
 *
 * Tables without an INTEGER PRIMARY KEY are matched by rowid, which VACUUM may renumber: after a VACUUM on one side
 * such a table can show rows as changed that only moved.
 */
export function diffDatabases(leftPath: string, rightPath: string, opts: DiffOptions = {}): DiffResult {
  const trustPages = opts.changedPages !== undefined && !hasPendingWal(leftPath) && !hasPendingWal(rightPath);
  // Raw-read fds close after the connections here (and a given one's close waits for its owner's connection, as any
  // raw descriptor's close waits for the process's last connection on the file: see raw-file).
  const raw: RawSides = trustPages
    ? { left: openRawDb(leftPath, opts.files?.left), right: openRawDb(rightPath, opts.files?.right) }
    : {};
  if (raw.left !== undefined && opts.leftKept !== undefined) placeWith(raw.left, opts.leftKept.placements);
  const given = opts.connections ?? {};
  try {
    const leftDb = given.left ? adoptDiffSide(given.left, 'left') : openDiffSide(leftPath, 'left');
    try {
      const rightDb = given.right ? adoptDiffSide(given.right, 'right') : openDiffSide(rightPath, 'right');
      try {
        return diffOpen(leftDb, rightDb, trustPages ? opts.changedPages : undefined, raw, opts);
      } catch (err) {
        throw sqliteFailure(err, `${leftPath} or ${rightPath}`);
      } finally {
        if (!given.right) rightDb.close();
      }
    } finally {
      if (!given.left) leftDb.close();
    }
  } finally {
    closeRawDb(raw.left);
    closeRawDb(raw.right);
  }
}

/** Largest file (in pages) whose narrowed tables still get row counts: 64 MiB of 4 KiB pages. */
const COUNT_LIMIT_PAGES = 16384;

interface RawSides {
  left?: RawDbFile | undefined;
  right?: RawDbFile | undefined;
}

function diffOpen(
  leftDb: SqliteDatabase,
  rightDb: SqliteDatabase,
  pages: ReadonlySet<number> | undefined,
  raw: RawSides,
  opts: DiffOptions,
): DiffResult {
  const summaryOnly = opts.summaryOnly === true;
  if (opts.forSql === true && opts.rows !== undefined)
    throw fail('INVALID_ARGUMENT', 'a diff for SQL needs every row: it takes no row limit', {
      hint: 'diff without a row limit',
    });
  const budget =
    opts.maxBytes === undefined
      ? undefined
      : new DiffBudget(opts.maxBytes, {
          tables: opts.tables !== undefined,
          limit: windowLimit(opts.rows),
          forSql: opts.forSql === true,
        });
  const leftCounts = opts.leftKept?.counts;
  const lc = catalogOf(leftDb, opts.leftKept);
  const rc = readCatalog(rightDb);
  const only = chosenTables(lc, rc, opts.tables);
  const schema = diffSchema(lc, rc).filter((c) => only === undefined || only.has(ownerOf(lc, rc, c)));
  const narrowed =
    pages !== undefined &&
    leftDb.pragma('page_size', { simple: true }) === rightDb.pragma('page_size', { simple: true });
  const stats: DiffStats = { tablesCompared: 0, rowsScanned: 0, narrowed, pagesRead: 0, tablesCounted: 0 };
  const structural = new Set<string>();
  const touched = narrowed ? touchedTables(leftDb, rightDb, lc, rc, schema, pages, raw, stats, structural) : undefined;
  // Tables touched only through changed pages compare only the rows on those pages (rowid tables, full diffs).
  // Their row counts cost a COUNT, O(table): reported for files up to COUNT_LIMIT_PAGES, omitted (as for tables
  // not read at all) above, where the count would cost more than the rest of the diff.
  const countNarrowed = (raw.left?.pageCount ?? Number.POSITIVE_INFINITY) <= COUNT_LIMIT_PAGES;
  const rowsOf =
    narrowed && raw.left && raw.right ? changedRowids(raw.left, raw.right, lc, rc, pages, stats) : undefined;
  const tables: TableDiff[] = [];
  for (const name of diffableTables(lc, rc)) {
    if (only !== undefined && !only.has(name)) continue;
    const inLeft = isOrdinary(lc, name);
    const inRight = isOrdinary(rc, name);
    if (touched !== undefined && !touched.has(name)) {
      const same: TableDiff = {
        table: name,
        key: readTableShape(rightDb, name).key,
        added: [],
        removed: [],
        changed: [],
        ...(opts.rows && !summaryOnly ? { counts: { added: 0, removed: 0, changed: 0 } } : {}),
        status: 'same',
      };
      if (summaryOnly && countNarrowed)
        same.leftCount = same.rightCount = leftCount(leftDb, { table: name, leftCounts }, stats);
      tables.push(same);
      continue;
    }
    const left = inLeft ? shapeOf(leftDb, name, opts.leftKept) : undefined;
    const right = inRight ? readTableShape(rightDb, name) : undefined;
    const ddlChanged =
      left !== undefined &&
      right !== undefined &&
      schema.some((c) => c.type === 'table' && c.name === name && c.change === 'changed');
    const fill = left && right && ddlChanged ? fillValues(left, right) : {};
    const onPages = structural.has(name) || !rowKeyed(left, right) ? undefined : rowsOf?.get(name);
    const rows = diffTableRows(
      leftDb,
      rightDb,
      {
        table: name,
        left,
        right,
        fill,
        summaryOnly,
        ...(onPages ? { rowids: onPages, countNarrowed } : {}),
        ...(budget ? { budget } : {}),
        ...(opts.rows ? { windows: opts.rows } : {}),
        ...(leftCounts ? { leftCounts } : {}),
      },
      stats,
    );
    const diff: TableDiff = { table: name, key: (right ?? left)?.key ?? [], ...rows };
    if (rc.tables.get(name) === 'shadow' || lc.tables.get(name) === 'shadow') diff.shadow = true;
    if (left && right && ddlChanged) diff.rebuild = rebuildPlan(rightDb, rc, name, left, right, fill);
    const dependents = left && right ? dependentsOf(lc, rc, name, diff.rebuild !== undefined) : [];
    if (dependents.length > 0 && (diff.rebuild !== undefined || diff.status !== 'same')) diff.dependents = dependents;
    tables.push(diff);
  }
  return { schema, tables, stats, summaryOnly };
}

/** The tables a diff is limited to, or undefined for all; NOT_FOUND names a table that exists on neither side. */
function chosenTables(
  lc: SchemaCatalog,
  rc: SchemaCatalog,
  tables: readonly string[] | undefined,
): Set<string> | undefined {
  if (tables === undefined) return undefined;
  const known = diffableTables(lc, rc);
  for (const t of tables) {
    if (!known.includes(t)) {
      throw fail('NOT_FOUND', `no table ${JSON.stringify(t)} on either side of the diff`, {
        hint: `the tables are: ${known.join(', ') || '(none)'}`,
      });
    }
  }
  return new Set(tables);
}

/** The table a schema change belongs to: its own name for a table, else the table its index or trigger is on. */
function ownerOf(lc: SchemaCatalog, rc: SchemaCatalog, c: SchemaChange): string {
  if (c.type === 'table') return c.name;
  const key = objectKey(c.type, c.name);
  return rc.byKey.get(key)?.tblName ?? lc.byKey.get(key)?.tblName ?? c.name;
}

/** True when both sides match rows by rowid the same way (an INTEGER PRIMARY KEY or the rowid itself). */
function rowKeyed(left: TableShape | undefined, right: TableShape | undefined): boolean {
  return (
    left !== undefined &&
    right !== undefined &&
    left.keyKind === right.keyKind &&
    (left.keyKind.startsWith('ipk:') || left.keyKind.startsWith('rowid:'))
  );
}

/** Every ordinary or shadow table on either side, sorted; sqlite_sequence included, statistics tables not. */
function diffableTables(lc: SchemaCatalog, rc: SchemaCatalog): string[] {
  const names = new Set<string>();
  for (const c of [lc, rc]) for (const name of c.tables.keys()) if (isOrdinary(c, name)) names.add(name);
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function isOrdinary(c: SchemaCatalog, name: string): boolean {
  const kind = c.tables.get(name);
  if (kind === undefined || kind === 'virtual') return false;
  const lower = name.toLowerCase();
  return lower !== 'sqlite_schema' && lower !== 'sqlite_master' && !isStatTable(name);
}

/**
 * Tables worth reading: owners of changed pages on either side, tables whose DDL differs, tables that exist on one
 * side only (shadow tables have no DDL of their own), and tables whose b-tree or an index's moved to another root.
 */
function touchedTables(
  leftDb: SqliteDatabase,
  rightDb: SqliteDatabase,
  lc: SchemaCatalog,
  rc: SchemaCatalog,
  schema: SchemaChange[],
  pages: ReadonlySet<number>,
  raw: RawSides,
  stats: DiffStats,
  structural: Set<string>,
): Set<string> {
  // An index created, dropped or redefined rewrites its own pages without changing any row of its table.
  const newIndexes = new Set(schema.filter((c) => c.type === 'index').map((c) => c.name));
  const touched = new Set([
    ...tablesOwningPages(leftDb, lc, pages, newIndexes, raw.left, stats),
    ...tablesOwningPages(rightDb, rc, pages, newIndexes, raw.right, stats),
  ]);
  for (const c of schema) if (c.type === 'table') structural.add(c.name);
  for (const [name, root] of rc.rootpages) {
    const before = lc.rootpages.get(name);
    if (before === undefined ? !rc.indexTable.has(name) : before !== root)
      structural.add(rc.indexTable.get(name) ?? name);
  }
  for (const name of lc.rootpages.keys()) if (!rc.rootpages.has(name) && !lc.indexTable.has(name)) structural.add(name);
  for (const name of structural) touched.add(name);
  return touched;
}

function rebuildPlan(
  rightDb: SqliteDatabase,
  rc: SchemaCatalog,
  name: string,
  left: TableShape,
  right: TableShape,
  fill: Row,
): TableRebuild {
  const copy = left.keyKind === right.keyKind ? right.columns.filter((c) => left.columns.includes(c)) : [];
  const plan: TableRebuild = { copy, fill: copy.length > 0 ? fill : {} };
  // DROP TABLE forgets the table's sequence and the copy re-seeds it from the highest rowid; restore the right's.
  const seq = rc.tables.has('sqlite_sequence')
    ? rightDb.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').pluck().get(name)
    : undefined;
  if (typeof seq === 'bigint') plan.sequence = seq;
  else if (/\bAUTOINCREMENT\b/i.test(rc.byKey.get(objectKey('table', name))?.sql ?? '')) plan.sequence = null;
  return plan;
}

/** Right-side triggers (and, when rebuilding, indexes) on the table whose DDL is identical on both sides. */
function dependentsOf(lc: SchemaCatalog, rc: SchemaCatalog, table: string, rebuilding: boolean): DependentObject[] {
  const out: DependentObject[] = [];
  for (const o of rc.objects) {
    if (o.tblName !== table || (o.type !== 'trigger' && !(rebuilding && o.type === 'index'))) continue;
    if (lc.byKey.get(objectKey(o.type, o.name))?.sql === o.sql) out.push({ type: o.type, name: o.name, sql: o.sql });
  }
  return out;
}
