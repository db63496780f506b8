import { z } from 'zod/v4';
import { databaseArg, nameString } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

/** `offshoot_promote`: makes the attempt that worked the content of the target branch. */
export const promoteTool = defineTool({
  name: 'offshoot_promote',
  title: 'Promote the attempt that worked',
  description: [
    "Replace the target branch's content with the source branch's head: promote the fork whose tests passed. The",
    "target's previous head is kept as '<target>-pre-promote'. main is protected: an unforced promote onto it is",
    'refused, and force is honoured only if the human allowed the agent to force (or, asked to confirm this call,',
    'accepts). On a refusal, do not retry: tell the human the exact command from the result (offshoot promote ...',
    '--force) or keep working on the fork. Refused while a daemon session is open on the target; an open source',
    'session is flushed through the daemon first, so its writes so far are promoted.',
  ].join(' '),
  annotations: HINTS.destructive,
  input: {
    database: databaseArg,
    source: nameString().describe('branch whose head is promoted (the attempt that worked)'),
    target: nameString().describe('branch that receives it (e.g. main)'),
    force: z
      .boolean()
      .optional()
      .describe('needed for a protected target; honoured only if the human allowed forcing, or confirms this call'),
  },
  output: {
    db: z.string(),
    source: z.string(),
    target: z.string(),
    txid: z.number(),
    backup: z.string(),
    path: z.string(),
    refreshed: z.boolean(),
    source_live: z
      .boolean()
      .describe(
        'true when the source had a live session: flushed first where the daemon could, else its last flushed head',
      ),
  },
  confirmable: (args) => args.force === true,
});
