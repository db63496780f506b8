import { fail } from '../../core/errors.js';
import type { DiffResult, Row, SchemaChange, TableDiff } from './diff-types.js';
import { differingColumns } from './row-change.js';
import { rowsLeftOut } from './row-window.js';
import { quoteIdent, sqlLiteral } from './sql-literal.js';

const REBUILD_TEMP = 'temp."offshoot_rebuild"';
const CREATE_ORDER: SchemaChange['type'][] = ['index', 'view', 'trigger'];
const DROP_ORDER: SchemaChange['type'][] = ['trigger', 'view', 'index', 'table'];

/**
 * Renders SQL that turns the left database into the right one, or '' when they are identical. Order: drop
 * removed/changed objects and the triggers of tables about to change (so they do not fire on the row changes),
 * rebuild tables whose DDL changed (copy rows aside, drop, create, copy back), create added tables, apply row changes
 * (DELETE, UPDATE, INSERT per table; sqlite_sequence last), then create indexes, views and triggers. Like .dump, it
 * turns foreign keys off first; changes that swap UNIQUE values between rows can still conflict mid-way.
 */
export function renderDiffSql(result: DiffResult): string {
  if (result.summaryOnly) {
    throw fail('INVALID_ARGUMENT', 'a summary-only diff carries no rows, so it cannot be rendered as SQL', {
      hint: 'diff again without summaryOnly',
    });
  }
  const partial = result.tables.find((t) => rowsLeftOut(t) > 0);
  if (partial !== undefined) {
    throw fail(
      'INVALID_ARGUMENT',
      `the diff lists only some row changes of ${partial.table}, so it cannot be rendered as SQL`,
      {
        hint: 'diff again without a row limit',
      },
    );
  }
  const byName = new Map(result.tables.map((t) => [t.table, t]));
  const rebuilt = (c: SchemaChange) =>
    c.type === 'table' && c.change === 'changed' && byName.get(c.name)?.rebuild !== undefined;
  const out: string[] = [];
  for (const type of DROP_ORDER) {
    for (const c of result.schema) {
      if (c.type === type && c.change !== 'added' && !rebuilt(c))
        out.push(`DROP ${c.type.toUpperCase()} ${quoteIdent(c.name)};`);
    }
    if (type === 'trigger') {
      for (const t of result.tables)
        for (const d of t.dependents ?? []) if (d.type === 'trigger') out.push(`DROP TRIGGER ${quoteIdent(d.name)};`);
    }
  }
  for (const t of result.tables) if (t.rebuild !== undefined) out.push(...rebuildStatements(t, result.schema));
  for (const c of result.schema)
    if (c.type === 'table' && c.change !== 'removed' && !rebuilt(c) && c.right !== undefined) out.push(`${c.right};`);
  const ordered = [
    ...result.tables.filter((t) => t.table !== 'sqlite_sequence'),
    ...result.tables.filter((t) => t.table === 'sqlite_sequence'),
  ];
  for (const t of ordered) rowStatements(t, out);
  for (const type of CREATE_ORDER) {
    for (const c of result.schema)
      if (c.type === type && c.change !== 'removed' && c.right !== undefined) out.push(`${c.right};`);
    for (const t of result.tables) for (const d of t.dependents ?? []) if (d.type === type) out.push(`${d.sql};`);
  }
  if (out.length === 0) return '';
  return ['PRAGMA foreign_keys=OFF;', 'BEGIN TRANSACTION;', ...out, 'COMMIT;', ''].join('\n');
}

function rebuildStatements(t: TableDiff, schema: SchemaChange[]): string[] {
  const ddl = schema.find((c) => c.type === 'table' && c.name === t.table && c.right !== undefined)?.right;
  const rebuild = t.rebuild;
  if (ddl === undefined || rebuild === undefined) return [];
  const table = quoteIdent(t.table);
  const out: string[] = [];
  const { copy, fill } = rebuild;
  if (copy.length > 0) {
    // Untyped temp columns have no affinity, so every value is carried over exactly as stored.
    const temp = copy.map((_, i) => `c${i}`);
    out.push(`CREATE TEMP TABLE ${REBUILD_TEMP}(${temp.join(', ')});`);
    out.push(`INSERT INTO ${REBUILD_TEMP} SELECT ${copy.map(quoteIdent).join(', ')} FROM ${table};`);
  }
  out.push(`DROP TABLE ${table};`, `${ddl};`);
  if (copy.length > 0) {
    const filled = Object.keys(fill);
    const cols = [...copy, ...filled].map(quoteIdent).join(', ');
    const values = [...copy.map((_, i) => `c${i}`), ...filled.map((c) => sqlLiteral(fill[c]))].join(', ');
    out.push(`INSERT INTO ${table}(${cols}) SELECT ${values} FROM ${REBUILD_TEMP};`, `DROP TABLE ${REBUILD_TEMP};`);
  }
  if (rebuild.sequence !== undefined) {
    out.push(`DELETE FROM "sqlite_sequence" WHERE "name" = ${sqlLiteral(t.table)};`);
    if (rebuild.sequence !== null)
      out.push(
        `INSERT INTO "sqlite_sequence"("name", "seq") VALUES(${sqlLiteral(t.table)}, ${sqlLiteral(rebuild.sequence)});`,
      );
  }
  return out;
}

// Appends to out one statement at a time: a table's rows spread into one push() overflow the stack past ~120,000.
function rowStatements(t: TableDiff, out: string[]): void {
  if (t.status === 'removed' || t.status === 'same') return;
  const table = quoteIdent(t.table);
  const replaced = t.rebuild !== undefined && t.rebuild.copy.length === 0;
  if (t.table === 'sqlite_sequence') {
    for (const r of t.removed) out.push(`DELETE FROM ${table} WHERE ${where(t.key, r)};`);
    for (const r of [...t.changed.map((c) => c.after), ...t.added])
      out.push(`DELETE FROM ${table} WHERE ${where(t.key, r)};`, insert(table, r));
    return;
  }
  if (t.status === 'added' && t.shadow === true) out.push(`DELETE FROM ${table};`);
  if (t.status === 'changed' && !replaced) {
    for (const r of t.removed) out.push(`DELETE FROM ${table} WHERE ${where(t.key, r)};`);
    for (const c of t.changed) {
      const set = differingColumns(t, c).map((col) => `${quoteIdent(col)} = ${sqlLiteral(c.after[col])}`);
      if (set.length > 0) out.push(`UPDATE ${table} SET ${set.join(', ')} WHERE ${where(t.key, c.key)};`);
    }
  }
  for (const r of t.added) out.push(insert(table, r));
}

function where(key: string[], row: Row): string {
  return key.map((k) => `${quoteIdent(k)} = ${sqlLiteral(row[k])}`).join(' AND ');
}

function insert(table: string, row: Row): string {
  const cols = Object.keys(row);
  return `INSERT INTO ${table}(${cols.map(quoteIdent).join(', ')}) VALUES(${cols.map((c) => sqlLiteral(row[c])).join(', ')});`;
}
