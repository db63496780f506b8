import { z } from 'zod/v4';
import { databaseArg, MOMENTS, nameString } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

const row = z.record(z.string(), z.unknown());

/** `offshoot_merge`: brings one fork's row changes into another branch, three-way, conflicts listed. */
export const mergeTool = defineTool({
  name: 'offshoot_merge',
  title: "Merge a fork's changes into another branch",
  description: [
    'Apply the row changes the source branch made since its common state with the target (the fork point, or the',
    'last merge of it) to the target, row by row: how two agents working on two forks bring their work together,',
    'where promote would keep only one. A row both changed differently is a conflict: the conflicts are listed and',
    'nothing changes (applied: false) unless prefer says which side wins (source or target); show them to the human',
    'before choosing. Schema changes on both sides are refused (MERGE_CONFLICT), so are tables without a primary key.',
    "The merge becomes a new checkpoint on the target; its previous head is kept as '<target>-pre-merge'. main is",
    'protected: an unforced merge into it is refused, and force is honoured only if the human allowed the agent to',
    'force (or, asked to confirm this call, accepts). On a refusal, do not retry: tell the human the exact command',
    '(offshoot merge ... --force). Refused while a daemon session is open on the target.',
  ].join(' '),
  annotations: HINTS.destructive,
  input: {
    database: databaseArg,
    source: nameString().describe('branch whose changes are merged (e.g. your fork)'),
    target: nameString().describe('branch that receives them (e.g. main)'),
    at: nameString().optional().describe(`merge this point of the source instead of its head: ${MOMENTS}`),
    prefer: z
      .enum(['source', 'target'])
      .optional()
      .describe(
        'how conflicting rows resolve: source takes the source, target keeps the target; absent, nothing changes',
      ),
    name: nameString()
      .optional()
      .describe('the checkpoint the merge makes on the target (default "merge", "merge-2", ...)'),
    force: z
      .boolean()
      .optional()
      .describe('needed for a protected target; honoured only if the human allowed forcing, or confirms this call'),
  },
  output: {
    db: z.string(),
    source: z.string(),
    target: z.string(),
    base: z.object({ kind: z.enum(['merge', 'fork', 'siblings']), at: z.string() }),
    applied: z.boolean().describe('false: conflicts stopped it (nothing changed), or there was nothing to merge'),
    prefer: z.enum(['source', 'target']).optional(),
    txid: z.number(),
    checkpoint: z.string().optional(),
    backup: z.string().optional().describe("the undo point holding the target's previous head"),
    earlier_backup: z.string().optional(),
    tables: z.array(z.object({ table: z.string(), inserted: z.number(), updated: z.number(), deleted: z.number() })),
    conflicts: z.array(
      z.object({
        table: z.string(),
        kind: z.enum(['update/update', 'update/delete', 'delete/update', 'insert/insert']),
        key: row,
        base: row.optional(),
        source: row.nullable(),
        target: row.nullable(),
      }),
    ),
  },
  confirmable: (args) => args.force === true,
});
