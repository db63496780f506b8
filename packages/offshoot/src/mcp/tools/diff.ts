import { z } from 'zod';
import { fail } from '../../core/errors.js';
import { MAIN_BRANCH } from '../../core/target.js';
import { DIFF_SERVER_BYTES, diff } from '../../ops/diff.js';
import { renderDiffSummary, renderDiffText } from '../../sqlite/diff/diff-format.js';
import { diffToJson } from '../../sqlite/diff/diff-json.js';
import { firstRows, rowCounts, rowsLeftOut } from '../../sqlite/diff/row-window.js';
import { branchOr, databaseArg, MOMENTS, nameArg, nameString, pointArg } from '../args.js';
import { defineTool, HINTS } from '../tool.js';

const MAX_ROWS = 500;
const DEFAULT_ROWS = 20;
const MAX_TEXT = 20_000;

const jsonValue = z.unknown();
const row = z.record(z.string(), jsonValue);

/** `offshoot_diff`: the native row-level diff of two durable states, structured and as text. */
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
        `row changes listed per table and kind (default ${DEFAULT_ROWS}, at most ${MAX_ROWS}); counts stay whole`,
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
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const source = branchOr('source', args.source);
    const target = nameArg('target', args.target);
    const limit = args.limit ?? DEFAULT_ROWS;
    if (limit < 0 || limit > MAX_ROWS)
      throw fail('INVALID_ARGUMENT', `limit ${limit} is out of range (0..${MAX_ROWS})`, {
        hint: 'use summary: true for counts only',
      });
    const left = {
      db,
      branch: source,
      ...(args.source_at ? { checkpoint: pointArg('source_at', args.source_at) } : {}),
    };
    const right = {
      db,
      branch: target,
      ...(args.target_at ? { checkpoint: pointArg('target_at', args.target_at) } : {}),
    };
    const label = (t: { branch: string; checkpoint?: string }) =>
      `${db}@${t.branch}${t.checkpoint ? `@${t.checkpoint}` : ''}`;
    const ctx = await deps.ops();
    deps.control.step(`comparing ${label(left)} with ${label(right)}`);
    // Only `limit` row changes of each kind are kept while every one is counted: the cap bounds the answer.
    const result = await diff(ctx, left, right, {
      summaryOnly: args.summary ?? false,
      rows: firstRows(limit),
      maxBytes: DIFF_SERVER_BYTES,
    });
    deps.control.step('rendering the diff');
    const json = diffToJson(result);
    const truncated = result.tables.some((t) => rowsLeftOut(t) > 0);
    const tables = json.tables.map((t) => {
      const n = rowCounts(t);
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
    const rendered = result.summaryOnly
      ? renderDiffSummary(result, label(left), label(right))
      : renderDiffText(result, label(left), label(right));
    const text =
      rendered.length > MAX_TEXT ? `${rendered.slice(0, MAX_TEXT)}\n… (cut; see structuredContent)` : rendered;
    return {
      structured: {
        left: label(left),
        right: label(right),
        schema: json.schema,
        tables,
        truncated,
        summary_only: json.summary_only,
      },
      text,
      touched: [
        { db, branch: source },
        { db, branch: target },
      ],
    };
  },
});
