import { z } from 'zod/v4';
import { branchArg, databaseArg } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

/** `offshoot_checkout`: the file to open with any SQLite client — a session's live path, else an at-rest checkout. */
export const checkoutTool = defineTool({
  name: 'offshoot_checkout',
  title: 'Get the SQLite file of a branch',
  description: [
    "Return the path of a branch's writable SQLite file, to open with any SQLite client (sqlite3, a driver, the app).",
    "Work in a fork's checkout, never in main's: fork first, check the fork out, write there. With a daemon session",
    "open on the branch this is the session's live path (writes are captured continuously); otherwise the file is at",
    'rest and what you write is kept only when you call offshoot_checkpoint.',
  ].join(' '),
  annotations: HINTS.additiveIdempotent,
  input: { database: databaseArg, branch: branchArg('branch to check out') },
  output: {
    db: z.string(),
    branch: z.string(),
    path: z.string(),
    txid: z.number().nullable(),
    live: z.boolean().describe('true when a daemon session captures writes to this path'),
    reused: z.boolean(),
    dirty: z
      .boolean()
      .describe(
        'true when the file holds writes no checkpoint has recorded yet: they are kept, call offshoot_checkpoint',
      ),
    kept: z
      .string()
      .nullable()
      .describe('the undo point that kept your uncheckpointed writes when the branch moved under the file'),
  },
});
