import { z } from 'zod/v4';
import { branchArg, databaseArg, nameString, MOMENTS } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

/** `offshoot_rollback`: repoints a branch at a checkpoint, keeping the old head as `<branch>-pre-rollback`. */
export const rollbackTool = defineTool({
  name: 'offshoot_rollback',
  title: 'Roll a branch back to a checkpoint',
  description: [
    'Return a branch to one of its checkpoints when tests fail or an attempt went wrong: later checkpoints are',
    "dropped and the checkout is refreshed. Before repointing, the previous head is kept as '<branch>-pre-rollback'",
    "(a TTL'd undo point, reported as `backup`); the result says how to undo. Refused while a daemon session is open",
    'on the branch (close it first), and, for a protected branch, while the undo point of its last rollback still',
    'exists (unless the human, asked to confirm this call, accepts).',
  ].join(' '),
  annotations: HINTS.destructive,
  input: {
    database: databaseArg,
    to: nameString().describe(`where to return to: ${MOMENTS} (the last durable state at or before it)`),
    branch: branchArg('branch to roll back'),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    to: z.string(),
    txid: z.number(),
    backup: z.string().describe('the safety fork holding the previous head'),
    earlier_backup: z
      .string()
      .optional()
      .describe('where the earlier undo point was kept: it held the only copy of its state'),
    abandoned: z.object({ from: z.number(), to: z.number() }).nullable(),
    path: z.string(),
    refreshed: z.boolean(),
    protected: z.boolean(),
    undo: z.string().describe('how to undo this rollback: a tool call, or the CLI command a human runs'),
  },
  confirmable: () => true,
});

/**
 * How to undo a rollback: promote its undo point back. A protected branch takes force, which is the human's unless
 * the agent may force: then it is the CLI command the human runs, else the tool call.
 */
export function rollbackUndo(r: {
  db: string;
  branch: string;
  backup: string;
  protected: boolean;
  allowForce: boolean;
}): { undo: string; humans: boolean } {
  const humans = r.protected && !r.allowForce;
  const undo = humans
    ? `offshoot promote ${r.db}@${r.backup} --onto ${r.branch} --force`
    : `offshoot_promote database=${r.db} source=${r.backup} target=${r.branch}${r.protected ? ' force=true' : ''}`;
  return { undo, humans };
}
