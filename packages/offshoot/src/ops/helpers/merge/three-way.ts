import { fail } from '../../../core/errors.js';
import type { DiffResult, Row, TableDiff } from '../../../sqlite/diff/diff-types.js';
import { sqlLiteral } from '../../../sqlite/diff/sql-literal.js';
import { compareSqlValues, sqlValuesEqual } from '../../../sqlite/diff/sql-value.js';
import { keyOf as resolvedKey, type ResolvedEntry, type Resolution, refuseUnmatched } from './resolved-rows.js';

/** The kinds of conflict a row can have, named source change / target change. */
export type ConflictKind = 'update/update' | 'update/delete' | 'delete/update' | 'insert/insert';

/** A row both sides changed since the common ancestor, to different values. A missing side row was deleted. */
export interface MergeConflict {
  table: string;
  kind: ConflictKind;
  /** The key columns and their values. */
  key: Row;
  /** The row as the common ancestor had it (absent for insert/insert). */
  base?: Row;
  /** The row as the source has it now (absent when the source deleted it). */
  source?: Row;
  /** The row as the target has it now (absent when the target deleted it). */
  target?: Row;
}

/** Which side a conflicting row takes: the source's change, or the target's row as it is. */
export type Prefer = 'source' | 'target';

/** What one table of a merge changes on the target. */
export interface MergedTable {
  table: string;
  inserted: number;
  updated: number;
  deleted: number;
}

/** The three-way result: the target → merged diff to apply (renderDiffSql renders it), and what conflicted. */
export interface ThreeWay {
  apply: DiffResult;
  conflicts: MergeConflict[];
  tables: MergedTable[];
  /** How many conflicts the caller's resolved rows settled. */
  resolved: number;
  /** The conflicts neither a resolved row nor `prefer` settled. */
  unresolved: MergeConflict[];
}

/** How a merge's conflicts are settled: a side for all of them, and the caller's own rows for some (these first). */
export interface Settle {
  prefer?: Prefer | undefined;
  resolution?: Resolution | undefined;
}

type Change = { kind: 'insert' | 'update' | 'delete'; before?: Row; after?: Row; key: Row };

const ROWID_ALIASES = new Set(['rowid', '_rowid_', 'oid']);

/**
 * Merges two diffs from one ancestor, row by row: `source` (ancestor → source) and `target` (ancestor → target). A
 * row only the source changed is taken; a row both changed to the same value, or both deleted, needs nothing; a row
 * both changed otherwise is a conflict (listed per table in key order): written as the caller's resolved row for it
 * when `settle.resolution` has one, else taken from the source or left as the target has it when `settle.prefer`
 * says so. INVALID_ARGUMENT when a resolved row names no conflict.
 * Rows of a rowid table with a declared PRIMARY KEY (`declaredKeys`) are matched by that key, not by rowid.
 * Refuses MERGE_CONFLICT when both sides changed the schema, or the source dropped a table whose rows the target
 * changed; UNSUPPORTED when the source changed rows of a table without a primary key (rowids are no identity across
 * two databases). sqlite_sequence takes the larger value of each table's, never a conflict.
 */
export function threeWay(
  source: DiffResult,
  target: DiffResult,
  settle: Settle,
  declaredKeys: ReadonlyMap<string, readonly string[]> = new Map(),
): ThreeWay {
  refuseSchemaOnBothSides(source, target);
  const byName = new Map(target.tables.map((t) => [t.table, rekeyed(t, declaredKeys.get(t.table))]));
  const tables: TableDiff[] = [];
  const conflicts: MergeConflict[] = [];
  const merged: MergedTable[] = [];
  const matched = new Set<ResolvedEntry>();
  const unresolved: MergeConflict[] = [];
  for (const s of source.tables) {
    if (s.status === 'same') continue;
    const t = byName.get(s.table);
    if (s.status === 'removed') {
      if (t !== undefined && t.status !== 'same') refuseDroppedTable(s.table);
      tables.push(s);
      continue;
    }
    if (s.status === 'added') {
      tables.push(s);
      merged.push({ table: s.table, inserted: s.added.length, updated: 0, deleted: 0 });
      continue;
    }
    const keyed = rekeyed(s, declaredKeys.get(s.table));
    refuseRowidTable(keyed);
    const out = mergeTable(keyed, t, settle, { conflicts, matched, unresolved });
    if (out.added.length + out.removed.length + out.changed.length > 0 || out.rebuild !== undefined) {
      tables.push(out);
      merged.push({
        table: s.table,
        inserted: out.added.length,
        updated: out.changed.length,
        deleted: out.removed.length,
      });
    }
  }
  const apply: DiffResult = {
    schema: source.schema,
    tables,
    stats: { tablesCompared: 0, rowsScanned: 0, narrowed: false, pagesRead: 0, tablesCounted: 0 },
    summaryOnly: false,
  };
  if (settle.resolution !== undefined) refuseUnmatched(settle.resolution, matched);
  return { apply, conflicts, tables: merged, resolved: matched.size, unresolved };
}

function refuseSchemaOnBothSides(source: DiffResult, target: DiffResult): void {
  if (source.schema.length === 0 || target.schema.length === 0) return;
  const names = (d: DiffResult) => d.schema.map((c) => `${c.type} ${c.name} ${c.change}`).join(', ');
  throw fail(
    'MERGE_CONFLICT',
    `both sides changed the schema since their common state (source: ${names(source)}; target: ${names(target)}); nothing was merged`,
    {
      hint: 'make the schema change on one side only (redo it on the other after the merge), or promote one side over the other',
    },
  );
}

function refuseDroppedTable(table: string): never {
  throw fail(
    'MERGE_CONFLICT',
    `the source dropped table ${table}, whose rows the target changed since their common state; nothing was merged`,
    { hint: `keep the table on the source, or drop it on the target too, then merge again` },
  );
}

function refuseRowidTable(s: TableDiff): void {
  if (!isRowidKeyed(s)) return;
  throw fail(
    'UNSUPPORTED',
    `table ${s.table} has no primary key, so its rows cannot be matched across two databases (a rowid is no identity); nothing was merged`,
    {
      hint: `give ${s.table} a PRIMARY KEY (or an INTEGER PRIMARY KEY), or promote one side over the other`,
    },
  );
}

function isRowidKeyed(t: TableDiff): boolean {
  const k = t.key[0];
  return t.key.length === 1 && k !== undefined && ROWID_ALIASES.has(k.toLowerCase()) && t.table !== 'sqlite_sequence';
}

/**
 * A rowid table's diff matched by its declared key instead: the rowid alias column dropped from every row (a row
 * keeps the rowid the target gives it), and a change of a key value split into a delete and an insert.
 */
function rekeyed(t: TableDiff, pk: readonly string[] | undefined): TableDiff {
  if (pk === undefined || pk.length === 0 || !isRowidKeyed(t) || t.rebuild !== undefined) return t;
  const alias = t.key[0] as string;
  const strip = (r: Row): Row => {
    const o: Row = { ...r };
    delete o[alias];
    return o;
  };
  const key = [...pk];
  const out: TableDiff = { ...t, key, added: t.added.map(strip), removed: t.removed.map(strip), changed: [] };
  for (const c of t.changed) {
    const before = strip(c.before);
    const after = strip(c.after);
    if (keyOf(key, before) === keyOf(key, after)) out.changed.push({ key: keyRow(key, after), before, after });
    else {
      out.removed.push(before);
      out.added.push(after);
    }
  }
  return out;
}

function keyOf(key: readonly string[], row: Row): string {
  return key.map((k) => sqlLiteral(row[k])).join(',');
}

function keyRow(key: readonly string[], row: Row): Row {
  const out: Row = {};
  for (const k of key) out[k] = row[k];
  return out;
}

function changesOf(t: TableDiff | undefined): Map<string, Change> {
  const m = new Map<string, Change>();
  if (t === undefined || t.status === 'same') return m;
  for (const r of t.added) m.set(keyOf(t.key, r), { kind: 'insert', after: r, key: keyRow(t.key, r) });
  for (const r of t.removed) {
    const k = keyOf(t.key, r);
    const inserted = m.get(k);
    // A row deleted and inserted again under the same key (a new rowid): an update, or nothing when it is the same.
    if (inserted === undefined) m.set(k, { kind: 'delete', before: r, key: keyRow(t.key, r) });
    else if (sameRow(r, inserted.after) && sameRow(inserted.after, r)) m.delete(k);
    else m.set(k, { kind: 'update', before: r, after: inserted.after, key: inserted.key });
  }
  for (const c of t.changed)
    m.set(keyOf(t.key, c.key), { kind: 'update', before: c.before, after: c.after, key: keyRow(t.key, c.key) });
  return m;
}

/** Two rows agree on every column both have (a column one side added is not compared). */
function sameRow(a: Row | undefined, b: Row | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return Object.keys(a).every((c) => !(c in b) || sqlValuesEqual(a[c], b[c]));
}

/** What merging the tables found: every conflict, the resolved rows that settled one, the conflicts left as they are. */
interface Found {
  conflicts: MergeConflict[];
  matched: Set<ResolvedEntry>;
  unresolved: MergeConflict[];
}

function mergeTable(s: TableDiff, t: TableDiff | undefined, settle: Settle, into: Found): TableDiff {
  const theirs = changesOf(t);
  const resolved = settle.resolution?.get(s.table);
  const found: MergeConflict[] = [];
  const unsettled: MergeConflict[] = [];
  const out: TableDiff = { table: s.table, key: s.key, added: [], removed: [], changed: [], status: 'changed' };
  if (s.rebuild !== undefined) out.rebuild = s.rebuild;
  const dependents = s.dependents ?? t?.dependents;
  for (const [k, sc] of changesOf(s)) {
    const tc = theirs.get(k);
    // The target's row now: its own change, else the ancestor's row (an insert had none).
    const current = tc !== undefined ? tc.after : sc.before;
    let wanted = sc.after;
    if (s.table === 'sqlite_sequence') wanted = largerSequence(sc.after, current);
    else if (tc !== undefined) {
      if (sameRow(sc.after, tc.after)) continue;
      const c = conflictOf(s.table, sc, tc);
      found.push(c);
      const mine = resolved?.get(resolvedKey(s.key, sc.key));
      if (mine !== undefined) {
        into.matched.add(mine);
        wanted = mine.row;
      } else {
        if (settle.prefer === undefined) unsettled.push(c);
        if (settle.prefer !== 'source') continue;
      }
    }
    if (wanted === undefined) {
      if (current !== undefined) out.removed.push(current);
    } else if (current === undefined) out.added.push(wanted);
    else if (!sameRow(wanted, current) || Object.keys(wanted).some((c) => !(c in current)))
      out.changed.push({ key: sc.key, before: current, after: wanted });
  }
  const byKey = (x: MergeConflict, y: MergeConflict) => compareKeys(s.key, x.key, y.key);
  into.conflicts.push(...found.sort(byKey));
  into.unresolved.push(...unsettled.sort(byKey));
  if (dependents !== undefined && out.added.length + out.removed.length + out.changed.length > 0)
    out.dependents = dependents;
  return out;
}

/** Orders rows by key, column by column, as SQLite's BINARY collation would. */
function compareKeys(key: readonly string[], a: Row, b: Row): number {
  for (const k of key) {
    const c = compareSqlValues(a[k], b[k]);
    if (c !== 0) return c;
  }
  return 0;
}

function largerSequence(a: Row | undefined, b: Row | undefined): Row | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return (a.seq as bigint) >= (b.seq as bigint) ? a : b;
}

function conflictOf(table: string, sc: Change, tc: Change): MergeConflict {
  const kind = `${sc.kind}/${tc.kind}` as ConflictKind;
  const c: MergeConflict = { table, kind, key: sc.key };
  const base = sc.before ?? tc.before;
  if (base !== undefined) c.base = base;
  if (sc.after !== undefined) c.source = sc.after;
  if (tc.after !== undefined) c.target = tc.after;
  return c;
}
