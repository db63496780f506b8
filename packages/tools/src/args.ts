import { z } from 'zod/v4';
import { MAIN_BRANCH, OFFSHOOT_META_PREFIX, TOOL_LIMITS } from './limits.js';

/**
 * A name argument (database, branch, checkpoint): never empty, in the schema as on the wire, so no call can name
 * `""` and have it read as a default.
 */
export function nameString(): z.ZodString {
  return z.string().min(1);
}

/** The required `database` argument. */
export const databaseArg = nameString().describe('database name (as created with `offshoot create`)');

/** What a point argument's description adds: the moments it takes besides a checkpoint. */
export const MOMENTS = 'a checkpoint name, or a moment: "tx:42" (that durable txid) or "at:2026-12-07T10:00:00Z"';

/** An optional branch argument that names main when omitted. */
export function branchArg(what: string): z.ZodOptional<z.ZodString> {
  return nameString().optional().describe(`${what} (default "${MAIN_BRANCH}")`);
}

/** The branch a call acts on, as offshoot resolves it: the one named, else main. */
export function branchOf(value: string | undefined): string {
  return value ?? MAIN_BRANCH;
}

const { maxKeys, maxKeyBytes, maxValueBytes } = TOOL_LIMITS.meta;

/** `meta`: string tags, bounded as the store bounds them; `offshoot.*` keys are offshoot's own. */
export const metaArg = z
  .record(z.string().max(maxKeyBytes), z.string().max(maxValueBytes))
  .optional()
  .describe(
    `string tags (run id, git SHA, agent name): at most ${maxKeys} keys, none starting with "${OFFSHOOT_META_PREFIX}"`,
  );
