import { z } from 'zod/v4';
import { databaseArg, MOMENTS, nameString } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

const row = z.record(z.string(), z.unknown());

/** A stored value as a conflict shows it: null, a number, a string, or a tagged integer, real or BLOB. */
const value = z.union([
  z.null(),
  z.number(),
  z.string(),
  z.object({ $int: z.string() }),
  z.object({ $real: z.string() }),
  z.object({ $blob: z.string() }),
]);
const valueRow = z.record(z.string(), value);

/** `offshoot_merge`: brings one fork's row changes into another branch, three-way, conflicts listed. */
export const mergeTool = defineTool({
  name: 'offshoot_merge',
  title: "Merge a fork's changes into another branch",
  description: [
    'Apply the row changes the source branch made since its common state with the target (the fork point, or the',
    'last merge of it) to the target, row by row: how two agents working on two forks bring their work together,',
    'where promote would keep only one. A row both changed differently is a conflict: the conflicts are listed and',
    'nothing changes (applied: false) unless each is settled: by your own row for it in resolved (its table and key',
    'as the conflict gives them, and the full row to write, or null to delete it), else by prefer (source or target',
    'wins). Show the conflicts to the human before choosing. Some conflicts resolved and others not, with no prefer,',
    'is refused (MERGE_CONFLICT); so is a resolved row naming no conflict (INVALID_ARGUMENT). Schema changes on both sides are refused (MERGE_CONFLICT), so are tables without a primary key.',
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
    resolved: z
      .array(
        z.object({
          table: z.string().describe("the conflict's table"),
          key: valueRow.describe("the conflict's key, exactly as the conflict gives it"),
          row: valueRow
            .nullable()
            .describe('the full row to write (every column; a BLOB as {"$blob": "<hex>"}), or null to delete it'),
        }),
      )
      .optional()
      .describe('your own rows for conflicts, one per conflicting row; prefer, if given, settles the rest'),
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
    prefer: z.enum(['source', 'target']).optional().describe('the side the conflicts resolved did not settle took'),
    resolved: z.number().optional().describe('how many conflicts your resolved rows settled'),
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
