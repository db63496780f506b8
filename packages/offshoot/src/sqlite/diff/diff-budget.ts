import { fail } from '../../core/errors.js';

/** Bytes a value adds to a diff, about as much as its JSON (`{"$blob": hex}`, a quoted string, a number) takes. */
function valueBytes(v: unknown): number {
  if (typeof v === 'string') return v.length + 3;
  if (v instanceof Uint8Array) return 2 * v.length + 14;
  return 22;
}

/** One side of a kept row change: a row's column names and values. */
export type RowSide = readonly [columns: readonly string[], values: readonly unknown[]];

/** What a diff was asked for, so that its TOO_LARGE suggests only the narrower requests it did not make. */
export interface DiffAsked {
  /** Limited to named tables already. */
  tables: boolean;
  /** The most row changes of one kind kept per table, when a limit was asked for. */
  limit: number | undefined;
  /** For SQL, which needs every row: neither a row limit nor counts only would do. */
  forSql: boolean;
}

/**
 * A cap on the row changes a diff keeps in memory, by their size as JSON: a diff that outgrows it stops with
 * TOO_LARGE naming the narrower requests, in each surface's terms, rather than holding (and then failing to send)
 * hundreds of megabytes. Rows a row limit leaves out are never charged.
 */
export class DiffBudget {
  #used = 0;
  #changes = 0;

  constructor(
    readonly maxBytes: number,
    private readonly asked: DiffAsked = { tables: false, limit: undefined, forSql: false },
  ) {}

  /** Counts one kept row change of `table` (both sides of a changed row); TOO_LARGE once the total passes the cap. */
  charge(table: string, ...sides: RowSide[]): void {
    let bytes = 2;
    for (const [columns, values] of sides)
      for (let i = 0; i < columns.length; i++) bytes += (columns[i]?.length ?? 0) + 4 + valueBytes(values[i]);
    this.#used += bytes;
    this.#changes++;
    if (this.#used <= this.maxBytes) return;
    const limited = this.asked.limit === undefined ? '' : `, at most ${this.asked.limit} per table and kind,`;
    throw fail(
      'TOO_LARGE',
      `the diff's row changes pass ${formatMiB(this.maxBytes)} (${this.#changes} row changes kept${limited} when table ${JSON.stringify(table)} went over)`,
      narrower(table, this.asked),
    );
  }
}

/** The requests that would answer within the cap, as the CLI, an agent (MCP tool arguments) and the wire name them. */
function narrower(table: string, asked: DiffAsked): { hint: string; hints: { agent: string; sdk: string } } {
  const cli: string[] = [];
  const sdk: string[] = [];
  if (!asked.forSql) {
    cli.push(
      asked.limit === undefined ? 'fewer rows per table (diff --limit 100)' : `a smaller --limit than ${asked.limit}`,
    );
    sdk.push(
      asked.limit === undefined ? 'fewer rows per table ("limit": 100)' : `a smaller "limit" than ${asked.limit}`,
    );
  }
  if (!asked.tables) {
    cli.push(`one table at a time (diff --table ${table})`);
    sdk.push(`one table at a time ("table": ${JSON.stringify(table)})`);
  }
  if (!asked.forSql) {
    cli.push('counts only (diff --summary)');
    sdk.push('counts only ("summary": true)');
  }
  const closer = 'or two checkpoints closer together';
  const agent = [
    asked.limit === undefined ? 'a limit' : `a smaller limit than ${asked.limit}`,
    'counts only (summary: true)',
    'or two checkpoints closer together (source_at, target_at)',
  ];
  return {
    hint: `ask for ${[...cli, closer].join(', ')}`,
    hints: { agent: `ask for ${agent.join(', ')}`, sdk: `ask for ${[...sdk, closer].join(', ')}` },
  };
}

function formatMiB(bytes: number): string {
  return bytes >= 1 << 20 ? `${Math.round(bytes / (1 << 20))} MiB` : `${bytes} bytes`;
}
