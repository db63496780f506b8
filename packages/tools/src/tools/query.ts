import { z } from 'zod/v4';
import { branchArg, databaseArg, nameString, MOMENTS } from '../args.js';
import { HINTS } from '../hints.js';
import { TOOL_LIMITS } from '../limits.js';
import { defineTool } from '../tool-spec.js';

const { defaultRows, maxRows, maxBytes } = TOOL_LIMITS.query;

/** `offshoot_query`: one read-only SQL statement against a branch or a checkpoint. */
export const queryTool = defineTool({
  name: 'offshoot_query',
  title: 'Query a branch or checkpoint (read-only)',
  description: [
    'Run one read-only SQL statement (SELECT, WITH, EXPLAIN, a reporting PRAGMA) against a branch or one of its',
    'checkpoints: look before you touch, inspect a fork after a migration, or compare a checkpoint. The head reads',
    "the branch's checkout when it has one (so your unsaved writes show), a checkpoint (`at`) reads its immutable",
    `copy. Writes, ATTACH, PRAGMA assignments and VACUUM are refused. At most \`limit\` rows (default`,
    `${defaultRows}, at most ${maxRows}) and ${maxBytes >> 20} MiB; BLOBs come back summarised; a slow statement is`,
    'stopped.',
  ].join(' '),
  annotations: HINTS.readOnly,
  input: {
    database: databaseArg,
    branch: branchArg('branch to read'),
    at: nameString().optional().describe(`read this point instead of the head: ${MOMENTS}`),
    sql: z.string().describe('one read-only SQL statement'),
    limit: z.number().int().optional().describe(`maximum rows (default ${defaultRows}, at most ${maxRows})`),
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
});
