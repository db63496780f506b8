import { z } from 'zod/v4';
import { databaseArg, nameString, MOMENTS } from '../args.js';
import { HINTS } from '../hints.js';
import { MAIN_BRANCH, TOOL_LIMITS } from '../limits.js';
import { ToolArgumentError } from '../tool-error.js';
import { defineTool, type OutputOf } from '../tool-spec.js';

const { defaultRows, maxRows } = TOOL_LIMITS.diff;

const row = z.record(z.string(), z.unknown());

/** `offshoot_diff`: the row-level diff of two durable states, structured. */
export const diffTool = defineTool({
  name: 'offshoot_diff',
  title: 'Diff two branches or checkpoints',
  description: [
    'Compare two durable states of a database, row by row: a fork against main (what your attempt changed), two',
    'attempts against each other, or a branch against one of its checkpoints. Use it before promoting, to show',
    'the human exactly what would change. Reads the store only (checkpointed or flushed state, not unsaved checkout',
    'writes). At most `limit` row changes of each kind are listed per table, the counts staying whole (a smaller',
    '`limit` is how to narrow a diff too large to answer); `summary` gives counts only. Read-only.',
  ].join(' '),
  annotations: HINTS.readOnly,
  input: {
    database: databaseArg,
    source: nameString().optional().describe(`left side branch (default "${MAIN_BRANCH}")`),
    target: nameString().describe('right side branch (e.g. your fork)'),
    source_at: nameString().optional().describe(`a point of the left branch instead of its head: ${MOMENTS}`),
    target_at: nameString().optional().describe(`a point of the right branch instead of its head: ${MOMENTS}`),
    limit: z
      .number()
      .int()
      .optional()
      .describe(
        `row changes listed per table and kind (default ${defaultRows}, at most ${maxRows}); counts stay whole`,
      ),
    summary: z.boolean().optional().describe('per-table counts and statuses only'),
  },
  output: {
    left: z.string(),
    right: z.string(),
    schema: z.array(
      z.object({
        type: z.string(),
        name: z.string(),
        change: z.enum(['added', 'removed', 'changed']),
        left: z.string().optional(),
        right: z.string().optional(),
      }),
    ),
    tables: z.array(
      z.object({
        table: z.string(),
        status: z.enum(['same', 'changed', 'added', 'removed']),
        key: z.array(z.string()),
        left_count: z.number().optional(),
        right_count: z.number().optional(),
        added: z.number(),
        removed: z.number(),
        changed: z.number(),
        rows: z.object({
          added: z.array(row),
          removed: z.array(row),
          changed: z.array(z.object({ key: row, before: row, after: row })),
        }),
      }),
    ),
    truncated: z.boolean().describe('true when some rows were left out by the limit'),
    summary_only: z.boolean(),
  },
});

/** The row changes a call lists per table and kind: its `limit`, checked, else the default. */
export function diffRows(limit: number | undefined): number {
  const n = limit ?? defaultRows;
  if (n < 0 || n > maxRows)
    throw new ToolArgumentError(`limit ${n} is out of range (0..${maxRows})`, 'use summary: true for counts only');
  return n;
}

type Row = Record<string, unknown>;

/** One table of a diff as offshoot answers it (`counts` whole where a limit listed only some rows). */
export interface DiffTableIn {
  table: string;
  status: 'same' | 'changed' | 'added' | 'removed';
  key: string[];
  left_count?: number | undefined;
  right_count?: number | undefined;
  added: Row[];
  removed: Row[];
  changed: Array<{ key: Row; before: Row; after: Row }>;
  counts?: { added: number; removed: number; changed: number } | undefined;
}

/** A diff as offshoot answers it: the daemon's `result`, the CLI's --json document, the engine's JSON form. */
export interface DiffIn {
  schema: OutputOf<typeof diffTool.output>['schema'];
  tables: DiffTableIn[];
  summary_only: boolean;
}

/** The tool's result for a diff of `left` and `right` (as labelled): every count whole, the rows listed. */
export function diffOutput(left: string, right: string, d: DiffIn): OutputOf<typeof diffTool.output> {
  let truncated = false;
  const tables = d.tables.map((t) => {
    const n = t.counts ?? { added: t.added.length, removed: t.removed.length, changed: t.changed.length };
    if (n.added + n.removed + n.changed > t.added.length + t.removed.length + t.changed.length) truncated = true;
    return {
      table: t.table,
      status: t.status,
      key: t.key,
      ...(t.left_count !== undefined ? { left_count: t.left_count } : {}),
      ...(t.right_count !== undefined ? { right_count: t.right_count } : {}),
      added: n.added,
      removed: n.removed,
      changed: n.changed,
      rows: { added: t.added, removed: t.removed, changed: t.changed },
    };
  });
  return { left, right, schema: d.schema, tables, truncated, summary_only: d.summary_only };
}
