import { z } from 'zod/v4';
import { databaseArg, nameString } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

/**
 * `offshoot_promote`: makes the attempt that worked the content of the target branch. With `defaultIfHead`, the
 * surface remembers the head each fork it made started from and defaults `if_head` to it for a promote of that fork
 * onto its base (said in the description and the schema).
 */
export function promoteTool(defaultIfHead: boolean) {
  return defineTool({
    name: 'offshoot_promote',
    title: 'Promote the attempt that worked',
    description: [
      "Replace the target branch's content with the source branch's head: promote the fork whose tests passed. The",
      "target's previous head is kept as '<target>-pre-promote' (an earlier undo point holding the only copy of its",
      "state is kept as '<target>-pre-promote-<n>', reported as earlier_backup). main is protected: an unforced",
      'promote onto it is refused, and force is honoured only if the human allowed the agent to force (or, asked to',
      'confirm this call, accepts). On a refusal, do not retry: tell the human the exact command from the result',
      '(offshoot promote ... --force) or keep working on the fork. Refused while a daemon session is open on the',
      'target; an open source session is flushed through the daemon first, so its writes so far are promoted. Pass',
      'if_head (the head txid you forked from) to promote only if nobody moved the target since: BASE_MOVED otherwise',
      '(look at what changed and redo the work on a new fork; do not retry).',
      ...(defaultIfHead
        ? [
            'A fork made by offshoot_fork is promoted onto the branch it came from with if_head set to the head it was',
            'forked at, unless the call names one.',
          ]
        : []),
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
      if_head: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe(
          "promote only while the target's head is still this txid (the head you forked from): otherwise refused BASE_MOVED, nothing changed" +
            (defaultIfHead ? '; default: the head a fork made by offshoot_fork started from, onto its base' : ''),
        ),
    },
    output: {
      db: z.string(),
      source: z.string(),
      target: z.string(),
      txid: z.number(),
      backup: z.string(),
      earlier_backup: z
        .string()
        .optional()
        .describe('where the earlier undo point was kept: it held the only copy of its state'),
      if_head: z
        .number()
        .nullable()
        .describe("the target head the promote required (the fork's starting point), or null when it required none"),
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
}
