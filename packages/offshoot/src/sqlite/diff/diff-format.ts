import type { DiffResult, Row, TableDiff } from './diff-types.js';
import { differingColumns } from './row-change.js';
import { rowCounts, rowsLeftOut } from './row-window.js';
import { sqlLiteral } from './sql-literal.js';

/** The first line of every human diff, echoing the targets as typed; scripts key on it. */
export function diffHeader(leftLabel: string, rightLabel: string): string {
  return `left:  ${leftLabel} right: ${rightLabel}`;
}

/** Renders a diff for people: the header, schema changes, then one section per table with +/-/~ rows. */
export function renderDiffText(result: DiffResult, leftLabel: string, rightLabel: string): string {
  const lines = [diffHeader(leftLabel, rightLabel)];
  if (result.schema.length > 0) {
    lines.push('schema:');
    for (const c of result.schema) {
      const mark = c.change === 'added' ? '+' : c.change === 'removed' ? '-' : '~';
      lines.push(`  ${mark} ${c.type} ${c.name}`);
      if (c.left !== undefined && c.change === 'changed') lines.push(indent(`left:  ${c.left}`, 6));
      if (c.right !== undefined) lines.push(indent(c.change === 'changed' ? `right: ${c.right}` : c.right, 6));
    }
  }
  for (const t of result.tables) if (t.status !== 'same') tableSection(t, lines);
  if (lines.length === 1) lines.push('no differences');
  return lines.join('\n') + '\n';
}

// Appends to lines one at a time: a table's rows spread into one push() overflow the stack past ~120,000.
function tableSection(t: TableDiff, lines: string[]): void {
  const head = `table ${t.table} (key ${t.key.join(', ')}): ${t.status}`;
  const n = rowCounts(t);
  const detailed = n.added + n.removed + n.changed > 0;
  const counts = detailed ? `, ${n.added} added, ${n.removed} removed, ${n.changed} changed` : countsNote(t);
  lines.push(head + counts);
  for (const r of t.removed) lines.push(`  - ${rowText(r)}`);
  for (const r of t.added) lines.push(`  + ${rowText(r)}`);
  for (const c of t.changed) {
    const cols = differingColumns(t, c).map(
      (col) => `${col}: ${col in c.before ? sqlLiteral(c.before[col]) : '(new column)'} -> ${sqlLiteral(c.after[col])}`,
    );
    lines.push(`  ~ ${rowText(c.key)}  ${cols.join(', ')}`);
  }
  const left = rowsLeftOut(t);
  if (left > 0) lines.push(`  … ${left} more not listed`);
}

function countsNote(t: TableDiff): string {
  if (t.leftCount === undefined && t.rightCount === undefined) return '';
  return `, rows ${t.leftCount ?? '-'} -> ${t.rightCount ?? '-'}`;
}

function rowText(r: Row): string {
  return Object.entries(r)
    .map(([k, v]) => `${k}=${sqlLiteral(v)}`)
    .join(' ');
}

function indent(text: string, n: number): string {
  const pad = ' '.repeat(n);
  return text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}

/**
 * Renders the table-level summary: the header, an aligned `TABLE <L> <R> STATUS` table of user tables (sqlite_%
 * tables are left out) with statuses `same`, `changed (+N)`/`changed (-N)` when counts differ, `changed` when counts
 * match but rows differ, `added` (left count `-`) and `removed` (right count `-`), then the totals line.
 */
export function renderDiffSummary(result: DiffResult, leftLabel: string, rightLabel: string): string {
  const rows: string[][] = [['TABLE', leftLabel, rightLabel, 'STATUS']];
  const totals = { same: 0, changed: 0, added: 0, removed: 0 };
  const tables = result.tables.filter((t) => !t.table.toLowerCase().startsWith('sqlite_'));
  for (const t of tables) {
    totals[t.status]++;
    const left = t.status === 'added' ? '-' : String(t.leftCount ?? '?');
    const right = t.status === 'removed' ? '-' : String(t.rightCount ?? '?');
    rows.push([t.table, left, right, summaryStatus(t)]);
  }
  const lines = [diffHeader(leftLabel, rightLabel), ...alignColumns(rows)];
  lines.push(
    `${tables.length} tables: ${totals.same} same, ${totals.changed} changed, ${totals.added} added, ${totals.removed} removed`,
  );
  return lines.join('\n') + '\n';
}

function summaryStatus(t: TableDiff): string {
  if (t.status !== 'changed') return t.status;
  const delta = (t.rightCount ?? 0) - (t.leftCount ?? 0);
  if (t.leftCount === undefined || t.rightCount === undefined || delta === 0) return 'changed';
  return `changed (${delta > 0 ? '+' : ''}${delta})`;
}

// Every column but the last is padded to its widest cell plus two spaces (as Go's tabwriter did).
function alignColumns(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const r of rows) {
    for (const [i, cell] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 2))).join(''));
}
