import { z } from 'zod';
import { parseTime } from '../../core/moment.js';
import { DEFAULT_LOG_LIMIT, logDocument, logRecordLine, readLog } from '../../ops/log.js';
import { branchArg, branchOr, databaseArg, nameArg } from '../args.js';
import { defineTool, HINTS } from '../tool.js';

const record = z.object({
  db: z.string(),
  branch: z.string(),
  seq: z.number(),
  op: z.string(),
  at: z.string(),
  actor: z.enum(['human', 'agent']),
  surface: z.string(),
  lineage: z.string(),
  txid_before: z.number(),
  txid_after: z.number(),
  meta: z.record(z.string(), z.string()),
});

/** `offshoot_log`: the history of a branch (read-only): every change, who asked for it and through what. */
export const logTool = defineTool({
  name: 'offshoot_log',
  title: 'Read the history of a branch',
  description: [
    'What happened to a branch, oldest first: every change (create, flush, checkpoint, fork, rollback, promote,',
    'compact, touch, protect, destroy, reap), when, the txids before and after, who asked (human or agent), through',
    'what (cli, daemon, mcp:<tool>, sdk:<adapter>/<framework>) and with which tags. Answer "what did the agent do?"',
    'with actor "agent"; name a state it left as a moment elsewhere ("tx:42" in offshoot_query\'s `at`,',
    "offshoot_diff's `source_at`, offshoot_rollback's `to`). A destroyed branch shows its last log, ending with who",
    `destroyed it. The newest \`limit\` records (default ${DEFAULT_LOG_LIMIT}).`,
  ].join(' '),
  annotations: HINTS.readOnly,
  input: {
    database: databaseArg,
    branch: branchArg('branch whose history to read'),
    actor: z.enum(['human', 'agent']).optional().describe("only this actor's records"),
    since: z.string().optional().describe('only records at or after this time (RFC 3339)'),
    limit: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(`the newest this many records (default ${DEFAULT_LOG_LIMIT}, 0: all)`),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    log_id: z.string().nullable(),
    live: z.boolean(),
    truncated: z.boolean(),
    records: z.array(record.passthrough()),
    destroyed: record.passthrough().optional(),
  },
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = branchOr('branch', args.branch);
    const ctx = await deps.ops();
    const r = await readLog(
      ctx,
      { db, branch },
      {
        ...(args.actor !== undefined ? { actor: args.actor } : {}),
        ...(args.since !== undefined ? { since: parseTime(args.since, 'since') } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
      },
    );
    const doc = logDocument(r);
    const head = r.live
      ? `${db}@${branch}: ${r.records.length} record(s)${r.truncated ? ' (older ones left out; raise limit)' : ''}`
      : `${db}@${branch} no longer exists; its last log has ${r.records.length} record(s)`;
    return {
      structured: {
        db,
        branch,
        log_id: r.logId ?? null,
        live: r.live,
        truncated: r.truncated,
        records: doc.records as Array<z.infer<typeof record>>,
        ...(doc.destroyed !== undefined ? { destroyed: doc.destroyed as z.infer<typeof record> } : {}),
      },
      text: [head, ...r.records.map(logRecordLine)].join('\n'),
      touched: r.live ? [{ db, branch }] : [],
    };
  },
});
