import type { DiffReport, DiffRow } from '@offshoot/client';

/** Rows listed per table and kind when the model names no limit, and the most it may ask for. */
export const DIFF_ROWS = { default: 20, max: 500 } as const;

/** One table of a diff as the model sees it: counts of every kind, and the first `limit` rows of each. */
export interface CappedTable {
  table: string;
  status: 'same' | 'changed' | 'added' | 'removed';
  key: string[];
  left_count?: number | undefined;
  right_count?: number | undefined;
  added: number;
  removed: number;
  changed: number;
  rows: {
    added: DiffRow[];
    removed: DiffRow[];
    changed: Array<{ key: DiffRow; before: DiffRow; after: DiffRow }>;
  };
}

/** Caps every table's rows at `limit` per kind, keeping the counts; `truncated` says whether any were left out. */
export function capDiffRows(
  tables: DiffReport['tables'],
  limit: number,
): { tables: CappedTable[]; truncated: boolean } {
  let truncated = false;
  const cap = <T>(xs: T[]): T[] => {
    if (xs.length > limit) truncated = true;
    return xs.slice(0, limit);
  };
  const capped = tables.map((t) => ({
    table: t.table,
    status: t.status,
    key: t.key,
    ...(t.left_count !== undefined ? { left_count: t.left_count } : {}),
    ...(t.right_count !== undefined ? { right_count: t.right_count } : {}),
    added: t.added.length,
    removed: t.removed.length,
    changed: t.changed.length,
    rows: { added: cap(t.added), removed: cap(t.removed), changed: cap(t.changed) },
  }));
  return { tables: capped, truncated };
}
