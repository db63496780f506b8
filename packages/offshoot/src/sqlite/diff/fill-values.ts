import type { Row } from './diff-types.js';
import { quoteIdent } from './sql-literal.js';
import type { TableShape } from './table-shape.js';
import { openDatabase } from '../sqlite-driver.js';
import { wholeTextSelect } from '../whole-text.js';

/**
 * The value each right-only column holds in a row carried over from the left: its DEFAULT with the column's
 * affinity applied, exactly as SQLite stores it. A scratch in-memory table with the same declared types and defaults
 * produces it, so `DEFAULT '0'` on an INTEGER column yields 0, not '0'. A default that cannot be evaluated yields
 * NULL; the comparison and the rebuild copy use the same value either way, so the SQL stays exact.
 */
export function fillValues(left: TableShape, right: TableShape): Row {
  const added = right.columns.filter((c) => !left.columns.includes(c));
  const fill: Row = {};
  if (added.length === 0) return fill;
  for (const c of added) fill[c] = null;
  const scratch = openDatabase(':memory:');
  try {
    scratch.defaultSafeIntegers(true);
    // table_xinfo gives an expression default without the parentheses its DEFAULT clause needs; a literal takes them too.
    const defs = added.map((c) => {
      const d = right.declared.get(c);
      return `${quoteIdent(c)} ${d?.type ?? ''}${d?.dflt ? ` DEFAULT (${d.dflt})` : ''}`;
    });
    scratch.exec(`CREATE TABLE fill(${defs.join(', ')}); INSERT INTO fill DEFAULT VALUES;`);
    const select = wholeTextSelect(scratch, added.map(quoteIdent));
    const row = scratch.prepare(`SELECT ${select.list} FROM fill`).raw().get() as unknown[];
    const values = select.values?.(row) ?? row;
    for (const [i, c] of added.entries()) fill[c] = values[i] ?? null;
  } catch {
    return fill;
  } finally {
    scratch.close();
  }
  return fill;
}
