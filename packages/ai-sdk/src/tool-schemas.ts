import { z } from 'zod';
import { DIFF_ROWS } from './diff-rows.js';

/** The branch a tool works on when the model names none. */
export const MAIN = 'main';

/** A database, branch or checkpoint name: never empty (offshoot refuses one, and would not read it as main). */
const name = () => z.string().min(1);
const database = name().describe('database name (as created with `offshoot create`)');
const branchOf = (what: string) => name().optional().describe(`${what} (default "${MAIN}")`);
const meta = z
  .record(z.string(), z.string())
  .optional()
  .describe('string tags (run id, git SHA, agent name): at most 32 keys, none starting with "offshoot."');

/** The branch a call acts on, as offshoot resolves it: an omitted branch is main. */
export function branchOrMain(branch: string | undefined): string {
  return branch ?? MAIN;
}
const diffRow = z.record(z.string(), z.unknown());

/** `offshoot_fork`'s input; `defaultTtl` is named in the TTL's description. */
export const forkInput = (defaultTtl: string) =>
  z.object({
    database,
    new_branch: name().describe('name of the new branch (a-z, 0-9, "-", "_", ".")'),
    branch: branchOf('source branch'),
    at: name().optional().describe('fork from this checkpoint of the source instead of its head'),
    ttl: z
      .string()
      .optional()
      .describe(`reap the fork after this long unused ("2h"); "none" for never; default ${defaultTtl}`),
    meta,
  });

/** `offshoot_fork`'s output. */
export const forkOutput = z.object({
  db: z.string(),
  source: z.string(),
  branch: z.string(),
  txid: z.number(),
  at: z.string().nullable(),
  ttl: z.string().nullable().describe('the TTL applied, or null for none'),
});

/** `offshoot_checkout`'s input. */
export const checkoutInput = z.object({ database, branch: branchOf('branch to check out') });

/** `offshoot_checkout`'s output. */
export const checkoutOutput = z.object({
  db: z.string(),
  branch: z.string(),
  path: z.string(),
  live: z.boolean().describe('true when a daemon session captures writes to this path'),
});

/** `offshoot_checkpoint`'s input. */
export const checkpointInput = z.object({
  database,
  name: name().describe('checkpoint name, unique on the branch (e.g. "migrated", "tests-pass")'),
  branch: branchOf('branch to checkpoint'),
  meta,
});

/** `offshoot_checkpoint`'s output. */
export const checkpointOutput = z.object({
  db: z.string(),
  branch: z.string(),
  name: z.string(),
  txid: z.number(),
  kind: z.enum(['live', 'segment', 'snapshot', 'none']).describe('none: unchanged since the last checkpoint'),
});

/** `offshoot_diff`'s input. */
export const diffInput = z.object({
  database,
  source: name().optional().describe(`left side branch (default "${MAIN}")`),
  target: name().describe('right side branch (e.g. your fork)'),
  source_at: name().optional().describe('a checkpoint of the left branch instead of its head'),
  target_at: name().optional().describe('a checkpoint of the right branch instead of its head'),
  limit: z
    .number()
    .int()
    .min(0)
    .max(DIFF_ROWS.max)
    .optional()
    .describe(`rows listed per table and kind (default ${DIFF_ROWS.default}, at most ${DIFF_ROWS.max})`),
  summary: z.boolean().optional().describe('per-table counts and statuses only'),
});

/** `offshoot_diff`'s output. */
export const diffOutput = z.object({
  left: z.string(),
  right: z.string(),
  schema: z.array(
    z.object({
      type: z.string(),
      name: z.string(),
      change: z.enum(['added', 'removed', 'changed']),
      left: z.string().optional(),
      right: z.string().optional(),
    }),
  ),
  tables: z.array(
    z.object({
      table: z.string(),
      status: z.enum(['same', 'changed', 'added', 'removed']),
      key: z.array(z.string()),
      left_count: z.number().optional(),
      right_count: z.number().optional(),
      added: z.number(),
      removed: z.number(),
      changed: z.number(),
      rows: z.object({
        added: z.array(diffRow),
        removed: z.array(diffRow),
        changed: z.array(z.object({ key: diffRow, before: diffRow, after: diffRow })),
      }),
    }),
  ),
  truncated: z.boolean().describe('true when some rows were left out by the limit'),
  summary_only: z.boolean(),
});

/** `offshoot_query`'s input. */
export const queryInput = z.object({
  database,
  branch: branchOf('branch to read'),
  at: name().optional().describe('read this checkpoint instead of the head'),
  sql: z.string().describe('one read-only SQL statement'),
  limit: z.number().int().min(1).max(1000).optional().describe('maximum rows (default 100)'),
});

/** `offshoot_query`'s output. */
export const queryOutput = z.object({
  db: z.string(),
  branch: z.string(),
  at: z.string().nullable(),
  source: z.enum(['checkout', 'head', 'checkpoint']),
  columns: z.array(z.string()),
  rows: z.array(z.array(z.unknown())),
  truncated: z.boolean(),
});

/** `offshoot_rollback`'s input. */
export const rollbackInput = z.object({
  database,
  to: name().describe('checkpoint to return to'),
  branch: branchOf('branch to roll back'),
});

/** `offshoot_rollback`'s output. */
export const rollbackOutput = z.object({ db: z.string(), branch: z.string(), to: z.string(), path: z.string() });

/** `offshoot_promote`'s input. */
export const promoteInput = z.object({
  database,
  source: name().describe('branch whose head is promoted (the attempt that worked)'),
  target: name().describe('branch that receives it (e.g. main)'),
  force: z.boolean().optional().describe('needed for a protected target; honoured only if the human allowed it'),
  if_head: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      "promote only while the target's head is still this txid (default: the head a fork made by offshoot_fork started from); BASE_MOVED otherwise",
    ),
});

/** `offshoot_promote`'s output. */
export const promoteOutput = z.object({
  db: z.string(),
  source: z.string(),
  target: z.string(),
  txid: z.number(),
  if_head: z
    .number()
    .nullable()
    .describe("the target head the promote required (the fork's starting point), or null when it required none"),
});

/** `offshoot_destroy`'s input. */
export const destroyInput = z.object({
  database,
  branch: name().describe('branch to destroy (required: there is no default)'),
  force: z.boolean().optional().describe('override protection and a live lease; honoured only if the human allowed it'),
});

/** `offshoot_destroy`'s output. */
export const destroyOutput = z.object({ db: z.string(), branch: z.string() });
