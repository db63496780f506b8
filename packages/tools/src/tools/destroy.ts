import { z } from 'zod/v4';
import { databaseArg, nameString } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

/** `offshoot_destroy`: deletes a branch (an abandoned attempt); protected branches and undo points need the human. */
export const destroyTool = defineTool({
  name: 'offshoot_destroy',
  title: 'Destroy a branch',
  description: [
    'Delete a branch and its checkout: an attempt you abandoned (forks also expire on their own by TTL). Protected',
    'branches (main) and the undo points of protected branches are refused; force is honoured only if the human',
    'allowed the agent to force (or, asked to confirm this call, accepts). On a refusal, ask the human (offshoot',
    'destroy ... --force) instead of retrying. Refused while a daemon session is open on the branch, and (without',
    'force) while its checkout holds writes no checkpoint has: checkpoint them first. branch has no default.',
  ].join(' '),
  annotations: HINTS.destructiveIdempotent,
  input: {
    database: databaseArg,
    branch: nameString().describe('branch to destroy (required: there is no default)'),
    force: z
      .boolean()
      .optional()
      .describe(
        'override protection; honoured only if the human allowed forcing, or confirms this call (a live lease is never taken)',
      ),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    removed_checkout: z.boolean(),
    discarded: z
      .object({
        reason: z.enum(['uncheckpointed_writes', 'unverified_checkout']),
        since_txid: z.number().optional(),
        last_write: z.string(),
        wal_bytes: z.number(),
      })
      .optional()
      .describe('what the checkout held that no checkpoint had: discarded with it'),
  },
  confirmable: (args) => args.force === true,
});
