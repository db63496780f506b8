/** The three kinds of row change a table's diff lists. */
export type RowKind = 'added' | 'removed' | 'changed';

/** How many row changes of each kind. */
export type RowCounts = Record<RowKind, number>;

/** The row changes of one kind a diff keeps: those at positions [offset, offset + limit) in key order. */
export interface RowWindow {
  offset: number;
  limit: number;
}

/** What a diff keeps of each table's row changes, by kind; a kind left out is kept whole. */
export type RowWindows = Partial<Record<RowKind, RowWindow>>;

/** The first `limit` row changes of each kind, per table. */
export function firstRows(limit: number): RowWindows {
  const w = { offset: 0, limit };
  return { added: w, removed: w, changed: w };
}

/** The largest number of row changes of one kind the windows keep (undefined: some kind is kept whole). */
export function windowLimit(rows: RowWindows | undefined): number | undefined {
  if (rows === undefined) return undefined;
  const kinds = [rows.added, rows.removed, rows.changed];
  if (kinds.some((w) => w === undefined)) return undefined;
  return Math.max(...kinds.map((w) => w?.limit ?? 0));
}

/** Counts one table's row changes by kind while deciding, from the windows, which of them are kept. */
export class RowTally {
  readonly counts: RowCounts = { added: 0, removed: 0, changed: 0 };

  constructor(private readonly windows: RowWindows | undefined) {}

  /** Counts one row change of `kind`; true when it falls in its window (or there is none). */
  keep(kind: RowKind): boolean {
    const i = this.counts[kind]++;
    const w = this.windows?.[kind];
    return w === undefined || (i >= w.offset && i < w.offset + w.limit);
  }

  /** True when some row change was counted. */
  get any(): boolean {
    return this.counts.added + this.counts.removed + this.counts.changed > 0;
  }
}

/** One table's row changes as its diff lists them (a TableDiff), with their counts when windows kept only some. */
export interface ListedRows {
  added: readonly unknown[];
  removed: readonly unknown[];
  changed: readonly unknown[];
  counts?: RowCounts;
}

/** A table's row changes by kind: its counts when windows kept only some, else the rows it lists. */
export function rowCounts(t: ListedRows): RowCounts {
  return t.counts ?? { added: t.added.length, removed: t.removed.length, changed: t.changed.length };
}

/** How many row changes a table has that its diff does not list. */
export function rowsLeftOut(t: ListedRows): number {
  const n = rowCounts(t);
  return n.added + n.removed + n.changed - (t.added.length + t.removed.length + t.changed.length);
}
