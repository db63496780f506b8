import { fail } from '../../core/errors.js';

/** Bytes a value adds to a diff, about as much as its JSON (`{"$blob": hex}`, a quoted string, a number) takes. */
function valueBytes(v: unknown): number {
  if (typeof v === 'string') return v.length + 3;
  if (v instanceof Uint8Array) return 2 * v.length + 14;
  return 22;
}

/**
 * A cap on the rows a diff keeps in memory, by their size as JSON: a diff that outgrows it stops with TOO_LARGE
 * naming the narrower requests, rather than holding (and then failing to send) hundreds of megabytes.
 */
export class DiffBudget {
  #used = 0;
  #rows = 0;

  constructor(readonly maxBytes: number) {}

  /** Counts one kept row of `table` (its column names and values); TOO_LARGE once the total passes the cap. */
  charge(table: string, columns: readonly string[], values: readonly unknown[]): void {
    let bytes = 2;
    for (let i = 0; i < columns.length; i++) bytes += (columns[i]?.length ?? 0) + 4 + valueBytes(values[i]);
    this.#used += bytes;
    this.#rows++;
    if (this.#used <= this.maxBytes) return;
    throw fail(
      'TOO_LARGE',
      `the diff's row changes pass ${formatMiB(this.maxBytes)} (${this.#rows} rows kept when table ${JSON.stringify(table)} went over)`,
      {
        hint: `ask for counts only (diff --summary), one table at a time (diff --table ${table}), or two checkpoints closer together`,
      },
    );
  }
}

function formatMiB(bytes: number): string {
  return bytes >= 1 << 20 ? `${Math.round(bytes / (1 << 20))} MiB` : `${bytes} bytes`;
}
