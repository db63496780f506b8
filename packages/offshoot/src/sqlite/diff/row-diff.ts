import type { SqliteDatabase } from '../sqlite-database.js';
import { wholeTextRows, wholeTextSelect } from '../whole-text.js';
import type { DiffBudget } from './diff-budget.js';
import type { DiffStats, Row, TableDiff } from './diff-types.js';
import { firstRows, type RowKind, RowTally, type RowWindows } from './row-window.js';
import { quoteIdent } from './sql-literal.js';
import { compareSqlValues, sqlValuesEqual } from './sql-value.js';
import type { TableShape } from './table-shape.js';

/** What to compare for one table; a side is absent when the table does not exist there. */
export interface RowDiffPlan {
  table: string;
  left?: TableShape;
  right?: TableShape;
  /** Values assumed on the left for right-only columns (see TableRebuild.fill). */
  fill: Row;
  summaryOnly: boolean;
  /** Compare only the rows with these rowids (every other row is known equal). */
  rowids?: ReadonlySet<bigint>;
  /** With rowids: still report both row counts (a COUNT of the left, O(table) in SQLite; the right's follows). */
  countNarrowed?: boolean;
  /** Caps the rows kept, across tables (TOO_LARGE past it). */
  budget?: DiffBudget;
  /** Which row changes to keep, by kind; the rest are only counted (every one kept when absent). */
  windows?: RowWindows;
  /** Row counts of the left file's tables from earlier diffs of the same unchanged file; filled as they are counted. */
  leftCounts?: Map<string, number>;
}

type RowDiffOutcome = Pick<
  TableDiff,
  'added' | 'removed' | 'changed' | 'counts' | 'status' | 'leftCount' | 'rightCount'
>;

/**
 * Diffs one table's rows. With the same key on both sides it merge-joins two key-ordered scans on separate
 * connections, so memory holds only the differences; otherwise every left row is removed and every right row added.
 * In summary mode it counts with COUNT(*) and reads rows only to find a first difference between equal counts; a
 * table narrowed to its changed pages' rows compares just those rows, keeping none, and counts only the left (once
 * per unchanged file, with the kept counts): the right's count follows from it and the rows added and removed. In a
 * file too large to count (countNarrowed false) it is not counted: those rows alone decide whether it changed.
 */
export function diffTableRows(
  leftDb: SqliteDatabase,
  rightDb: SqliteDatabase,
  plan: RowDiffPlan,
  stats: DiffStats,
): RowDiffOutcome {
  const { left, right } = plan;
  const out: RowDiffOutcome = { added: [], removed: [], changed: [], status: 'same' };
  stats.tablesCompared++;
  if (plan.summaryOnly) {
    if (left && right && left.keyKind === right.keyKind && plan.rowids !== undefined) {
      if (plan.countNarrowed !== true) {
        if (mergeJoin(leftDb, rightDb, plan, left, right, stats, out, true).differs) out.status = 'changed';
        return out;
      }
      // Every row off the changed pages is equal on both sides, so the right's count follows from the left's (kept
      // from an earlier diff of the same file, or counted once) and the narrowed rows' changes, none of them kept.
      const tally = new RowTally(firstRows(0));
      mergeJoin(leftDb, rightDb, plan, left, right, stats, out, false, tally);
      out.leftCount = leftCount(leftDb, plan, stats);
      out.rightCount = out.leftCount - tally.counts.removed + tally.counts.added;
      if (tally.any) out.status = 'changed';
      return out;
    }
    if (left) out.leftCount = leftCount(leftDb, plan, stats);
    if (right) out.rightCount = countRows(rightDb, plan.table, stats);
    if (!left || !right) {
      out.status = left ? 'removed' : 'added';
      return out;
    }
    if (out.leftCount !== out.rightCount || left.keyKind !== right.keyKind) {
      out.status = 'changed';
      return out;
    }
    if (mergeJoin(leftDb, rightDb, plan, left, right, stats, out, true).differs) out.status = 'changed';
    return out;
  }
  const tally = new RowTally(plan.windows);
  if (left && right && left.keyKind === right.keyKind) {
    const walked = mergeJoin(leftDb, rightDb, plan, left, right, stats, out, false, tally);
    if (plan.rowids === undefined) {
      out.leftCount = walked.leftRows;
      out.rightCount = walked.rightRows;
    } else if (plan.countNarrowed === true) {
      // Every other row is equal on both sides, so one count gives the other exactly.
      out.leftCount = leftCount(leftDb, plan, stats);
      out.rightCount = out.leftCount - tally.counts.removed + tally.counts.added;
    }
  } else {
    if (left) out.leftCount = collectAll(leftDb, plan, left, { kind: 'removed', into: out.removed, tally }, stats);
    if (right) out.rightCount = collectAll(rightDb, plan, right, { kind: 'added', into: out.added, tally }, stats);
  }
  if (plan.windows !== undefined) out.counts = tally.counts;
  if (!left) out.status = 'added';
  else if (!right) out.status = 'removed';
  else if (tally.any) out.status = 'changed';
  return out;
}

/** The left side's row count, from the plan's known counts when an earlier diff of the same file counted it. */
export function leftCount(
  db: SqliteDatabase,
  plan: Pick<RowDiffPlan, 'table' | 'leftCounts'>,
  stats: DiffStats,
): number {
  const known = plan.leftCounts?.get(plan.table);
  if (known !== undefined) return known;
  const n = countRows(db, plan.table, stats);
  plan.leftCounts?.set(plan.table, n);
  return n;
}

function countRows(db: SqliteDatabase, table: string, stats: DiffStats): number {
  stats.tablesCounted++;
  const n = db
    .prepare(`SELECT count(*) FROM ${quoteIdent(table)}`)
    .pluck()
    .get() as bigint;
  return Number(n);
}

function scan(
  db: SqliteDatabase,
  table: string,
  shape: TableShape,
  rowids?: ReadonlySet<bigint>,
): IterableIterator<unknown[]> {
  const select = wholeTextSelect(db, shape.columns.map(quoteIdent));
  const order = shape.key
    .map((k) => (shape.keyKind.startsWith('pk:') ? `${quoteIdent(k)} COLLATE BINARY` : quoteIdent(k)))
    .join(', ');
  if (rowids === undefined) {
    const rows = db
      .prepare(`SELECT ${select.list} FROM ${quoteIdent(table)} ORDER BY ${order}`)
      .raw()
      .iterate() as IterableIterator<unknown[]>;
    return wholeTextRows(rows, select);
  }
  // The key is the rowid (or its INTEGER PRIMARY KEY alias), so each listed row is one b-tree lookup.
  const key = quoteIdent(shape.key[0] as string);
  const rows = db
    .prepare(
      `SELECT ${select.list} FROM ${quoteIdent(table)} WHERE ${key} IN (SELECT value FROM json_each(?)) ORDER BY ${order}`,
    )
    .raw()
    .iterate(`[${[...rowids].join(',')}]`) as IterableIterator<unknown[]>;
  return wholeTextRows(rows, select);
}

/** Where one side's every row goes when the other side cannot be matched by key: all added, or all removed. */
interface Collected {
  kind: Extract<RowKind, 'added' | 'removed'>;
  into: Row[];
  tally: RowTally;
}

function collectAll(db: SqliteDatabase, plan: RowDiffPlan, shape: TableShape, to: Collected, stats: DiffStats): number {
  let n = 0;
  for (const values of scan(db, plan.table, shape)) {
    if (to.tally.keep(to.kind)) {
      plan.budget?.charge(plan.table, [shape.columns, values]);
      to.into.push(toRow(shape.columns, values));
    }
    n++;
  }
  stats.rowsScanned += n;
  return n;
}

/**
 * Walks both key-ordered scans in step; with stopAtFirst it returns at the first difference, keeping no rows. Every
 * difference is counted in `tally`, and kept only when it falls in its kind's window.
 */
function mergeJoin(
  leftDb: SqliteDatabase,
  rightDb: SqliteDatabase,
  plan: RowDiffPlan,
  left: TableShape,
  right: TableShape,
  stats: DiffStats,
  out: RowDiffOutcome,
  stopAtFirst: boolean,
  tally: RowTally = new RowTally(undefined),
): { differs: boolean; leftRows: number; rightRows: number } {
  const lKey = left.key.map((k) => left.columns.indexOf(k));
  const rKey = right.key.map((k) => right.columns.indexOf(k));
  // Each right column is compared with its left counterpart, or with the fill value when the left lacks it.
  const pairs = right.columns.map((c, ri) => ({ ri, li: left.columns.indexOf(c), fill: plan.fill[c] ?? null }));
  const lit = scan(leftDb, plan.table, left, plan.rowids);
  const rit = scan(rightDb, plan.table, right, plan.rowids);
  let nl = 0;
  let nr = 0;
  let differs = false;
  const result = () => ({ differs, leftRows: nl, rightRows: nr });
  try {
    let l = lit.next();
    let r = rit.next();
    while (!l.done || !r.done) {
      let cmp: number;
      if (l.done) cmp = 1;
      else if (r.done) cmp = -1;
      else cmp = compareKeyColumns(l.value, lKey, r.value, rKey);
      if (cmp < 0) {
        const lv = l.value as unknown[];
        nl++;
        differs = true;
        if (stopAtFirst) return result();
        if (tally.keep('removed')) {
          plan.budget?.charge(plan.table, [left.columns, lv]);
          out.removed.push(toRow(left.columns, lv));
        }
        l = lit.next();
      } else if (cmp > 0) {
        const rv = r.value as unknown[];
        nr++;
        differs = true;
        if (stopAtFirst) return result();
        if (tally.keep('added')) {
          plan.budget?.charge(plan.table, [right.columns, rv]);
          out.added.push(toRow(right.columns, rv));
        }
        r = rit.next();
      } else {
        const lv = l.value as unknown[];
        const rv = r.value as unknown[];
        nl++;
        nr++;
        if (!pairs.every((p) => sqlValuesEqual(p.li < 0 ? p.fill : lv[p.li], rv[p.ri]))) {
          differs = true;
          if (stopAtFirst) return result();
          if (tally.keep('changed')) {
            plan.budget?.charge(plan.table, [left.columns, lv], [right.columns, rv]);
            const before = toRow(left.columns, lv);
            out.changed.push({ key: toRow(left.key, pick(lv, lKey)), before, after: toRow(right.columns, rv) });
          }
        }
        l = lit.next();
        r = rit.next();
      }
    }
    return result();
  } finally {
    stats.rowsScanned += nl + nr;
    lit.return?.();
    rit.return?.();
  }
}

function compareKeyColumns(
  l: readonly unknown[],
  lKey: readonly number[],
  r: readonly unknown[],
  rKey: readonly number[],
): number {
  for (let i = 0; i < lKey.length; i++) {
    const c = compareSqlValues(l[lKey[i] ?? 0], r[rKey[i] ?? 0]);
    if (c !== 0) return c;
  }
  return 0;
}

function pick(values: readonly unknown[], idx: readonly number[]): unknown[] {
  return idx.map((i) => values[i]);
}

function toRow(columns: readonly string[], values: readonly unknown[]): Row {
  const row: Row = {};
  columns.forEach((c, i) => {
    row[c] = values[i] ?? null;
  });
  return row;
}
