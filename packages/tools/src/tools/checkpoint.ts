import { z } from 'zod/v4';
import { branchArg, databaseArg, metaArg, nameString } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

/** `offshoot_checkpoint`: names the branch's current state durably — a live flush under a session, else at rest. */
export const checkpointTool = defineTool({
  name: 'offshoot_checkpoint',
  title: 'Checkpoint a branch',
  description: [
    "Record the branch's current state as a named checkpoint, durably in the store. Checkpoint when tests pass (or",
    'before the next risky step), so offshoot_rollback can return here if a later step fails. With a daemon session',
    "open on the branch it flushes live; otherwise it quiesces the branch's checkout and writes what changed.",
    '`meta` tags the checkpoint (test results, git SHA, run id).',
  ].join(' '),
  annotations: HINTS.additive,
  input: {
    database: databaseArg,
    name: nameString().describe('checkpoint name, unique on the branch (e.g. "migrated", "tests-pass")'),
    branch: branchArg('branch to checkpoint'),
    meta: metaArg,
  },
  output: {
    db: z.string(),
    branch: z.string(),
    name: z.string(),
    txid: z.number(),
    kind: z.enum(['segment', 'snapshot', 'none', 'live']),
    live: z.boolean(),
    meta: z.record(z.string(), z.string()).optional(),
  },
});
