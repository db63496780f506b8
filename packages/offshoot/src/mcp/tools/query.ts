import type { queryTool } from '@offshoot/tools';
import { QUERY_LIMITS, query } from '../../ops/query.js';
import { branchOr, nameArg, pointArg } from '../args.js';
import { holdingEphemeral, withDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';

const MAX_TEXT_ROWS = 50;

function truncation(by: 'rows' | 'bytes' | undefined): string {
  if (by === 'bytes') return `, truncated at ${QUERY_LIMITS.maxBytes >> 20} MiB (select fewer or narrower columns)`;
  return by === 'rows' ? ', truncated at the limit' : '';
}

/** `offshoot_query`: one read-only SQL statement against a branch or a checkpoint. */
export const queryRun: ToolRun<typeof queryTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = branchOr('branch', args.branch);
    const at = args.at === undefined ? undefined : pointArg('at', args.at);
    deps.control.step(`querying ${db}@${branch}${at ? `@${at}` : ''}`);
    // An ephemeral branch is read by the daemon holding it, the only one that has it.
    const r = await withDaemon(deps, async (d) => {
      const held = holdingEphemeral(d, db, branch);
      if (held !== undefined) {
        const q = await held.client.query(db, branch, args.sql, {
          ...(at !== undefined ? { at } : {}),
          ...(args.limit !== undefined ? { limit: args.limit } : {}),
        });
        return { ...q, truncatedBy: q.truncated ? ('rows' as const) : undefined };
      }
      return query(await deps.ops(), { db, branch }, args.sql, {
        signal: deps.control.signal,
        ...(at !== undefined ? { at } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        timeoutMs: deps.options.queryTimeoutMs,
      });
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
};
