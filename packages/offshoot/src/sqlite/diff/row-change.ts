import type { TableDiff } from './diff-types.js';
import { sqlValuesEqual } from './sql-value.js';

/** Columns whose value differs in a changed row; a right-only column is compared with the rebuild's fill value. */
export function differingColumns(table: TableDiff, change: TableDiff['changed'][number]): string[] {
  const fill = table.rebuild?.fill ?? {};
  return Object.keys(change.after).filter((c) => {
    const before = c in change.before ? change.before[c] : (fill[c] ?? null);
    return !sqlValuesEqual(before, change.after[c]);
  });
}
