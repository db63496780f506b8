import { z } from 'zod';
import { QUERY_LIMITS, query } from '../../ops/query.js';
import { branchArg, branchOr, databaseArg, MOMENTS, nameArg, nameString, pointArg } from '../args.js';
import { defineTool, HINTS } from '../tool.js';

const MAX_TEXT_ROWS = 50;

function truncation(by: 'rows' | 'bytes' | undefined): string {
  if (by === 'bytes') return `, truncated at ${QUERY_LIMITS.maxBytes >> 20} MiB (select fewer or narrower columns)`;
  return by === 'rows' ? ', truncated at the limit' : '';
}

/** `offshoot_query`: one read-only SQL statement against a branch or a checkpoint. */
export const queryTool = defineTool({
  name: 'offshoot_query',
  title: 'Query a branch or checkpoint (read-only)',
  description: [
    'Run one read-only SQL statement (SELECT, WITH, EXPLAIN, a reporting PRAGMA) against a branch or one of its',
    'checkpoints: look before you touch, inspect a fork after a migration, or compare a checkpoint. The head reads',
    "the branch's checkout when it has one (so your unsaved writes show), a checkpoint (`at`) reads its immutable",
    `copy. Writes, ATTACH, PRAGMA assignments and VACUUM are refused. At most \`limit\` rows (default`,
    `${QUERY_LIMITS.defaultRows}, at most ${QUERY_LIMITS.maxRows}) and ${QUERY_LIMITS.maxBytes >> 20} MiB; BLOBs come back`,
    'summarised; a slow statement is stopped.',
  ].join(' '),
  annotations: HINTS.readOnly,
  input: {
    database: databaseArg,
    branch: branchArg('branch to read'),
    at: nameString().optional().describe(`read this point instead of the head: ${MOMENTS}`),
    sql: z.string().describe('one read-only SQL statement'),
    limit: z
      .number()
      .int()
      .optional()
      .describe(`maximum rows (default ${QUERY_LIMITS.defaultRows}, at most ${QUERY_LIMITS.maxRows})`),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    at: z.string().nullable(),
    source: z.enum(['checkout', 'head', 'checkpoint']),
    columns: z.array(z.string()),
    rows: z.array(z.array(z.unknown())),
    truncated: z.boolean(),
  },
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = branchOr('branch', args.branch);
    const at = args.at === undefined ? undefined : pointArg('at', args.at);
    const ctx = await deps.ops();
    deps.control.step(`querying ${db}@${branch}${at ? `@${at}` : ''}`);
    const r = await query(ctx, { db, branch }, args.sql, {
      signal: deps.control.signal,
      ...(at !== undefined ? { at } : {}),
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      timeoutMs: deps.options.queryTimeoutMs,
    });
    const shown = r.rows.slice(0, MAX_TEXT_ROWS).map((row) => row.map((v) => JSON.stringify(v)).join(' | '));
    const text = [
      `${db}@${branch}${at ? `@${at}` : ''} (${r.source}): ${r.rows.length} row(s)${truncation(r.truncatedBy)}`,
      r.columns.join(' | '),
      ...shown,
      ...(r.rows.length > MAX_TEXT_ROWS ? [`… ${r.rows.length - MAX_TEXT_ROWS} more in structuredContent`] : []),
    ].join('\n');
    return {
      structured: {
        db,
        branch,
        at: at ?? null,
        source: r.source,
        columns: r.columns,
        rows: r.rows,
        truncated: r.truncated,
      },
      text,
      touched: [{ db, branch }],
    };
  },
});
