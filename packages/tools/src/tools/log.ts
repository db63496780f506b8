import { z } from 'zod/v4';
import { branchArg, databaseArg } from '../args.js';
import { HINTS } from '../hints.js';
import { TOOL_LIMITS } from '../limits.js';
import { defineTool } from '../tool-spec.js';

const { defaultRecords } = TOOL_LIMITS.log;

/** One record of a branch log, with the fields every record carries (and whatever else it says, passed through). */
const logRecord = z
  .object({
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
  })
  .passthrough();

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
    `destroyed it. The newest \`limit\` records (default ${defaultRecords}).`,
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
      .describe(`the newest this many records (default ${defaultRecords}, 0: all)`),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    log_id: z.string().nullable(),
    live: z.boolean(),
    truncated: z.boolean(),
    records: z.array(logRecord),
    destroyed: logRecord.optional(),
  },
});
