import { z } from 'zod';
import { fail } from '../core/errors.js';
import { formatDuration, parseTtl, type TtlArg } from '../core/duration.js';
import { META_LIMITS, OFFSHOOT_META_PREFIX } from '../core/meta.js';
import { nameHint, nameProblem } from '../core/names.js';
import { MAIN_BRANCH } from '../core/target.js';
import { parseMoment } from '../core/moment.js';

/**
 * A name argument (database, branch, checkpoint): never empty, in the schema as on the wire, so no call can name
 * `""` and have it read as a default.
 */
export function nameString(): z.ZodString {
  return z.string().min(1);
}

/** The required `database` argument. */
export const databaseArg = nameString().describe('database name (as created with `offshoot create`)');

/** An optional branch argument that defaults to main when omitted. */
export function branchArg(what: string): z.ZodOptional<z.ZodString> {
  return nameString().optional().describe(`${what} (default "${MAIN_BRANCH}")`);
}

/** `meta`: string tags, bounded like the store bounds them; `offshoot.*` keys are offshoot's own. */
export const metaArg = z
  .record(z.string().max(META_LIMITS.maxKeyBytes), z.string().max(META_LIMITS.maxValueBytes))
  .optional()
  .describe(
    `string tags (run id, git SHA, agent name): at most ${META_LIMITS.maxKeys} keys, none starting with "${OFFSHOOT_META_PREFIX}"`,
  );

/** Checks a name argument, failing with `invalid <arg> "<value>": <problem>`. */
export function nameArg(arg: string, value: string): string {
  const problem = nameProblem(value);
  if (problem !== undefined) {
    throw fail('INVALID_NAME', `invalid ${arg} ${JSON.stringify(value)}: ${problem}`, {
      hint: nameHint(value),
    });
  }
  return value;
}

/**
 * Checks an argument naming a point of a branch: a checkpoint name, or a moment (`tx:42`, the branch at txid 42;
 * `at:2026-12-07T10:00:00Z`, the branch as it was then), which no checkpoint name can be.
 */
export function pointArg(arg: string, value: string): string {
  return parseMoment(value) !== undefined ? value : nameArg(arg, value);
}

/** What a point argument's description adds: the moments it takes besides a checkpoint. */
export const MOMENTS = 'a checkpoint name, or a moment: "tx:42" (that durable txid) or "at:2026-12-07T10:00:00Z"';

/** The branch an optional argument names: the value checked, else main. */
export function branchOr(arg: string, value: string | undefined): string {
  return value === undefined ? MAIN_BRANCH : nameArg(arg, value);
}

/** Parses a TTL argument with the one grammar (core parseTtl): on a fork `none` means never and zero is refused. */
export function ttlArg(value: string | undefined, use: 'touch' | 'fork' = 'touch'): TtlArg {
  return parseTtl(value, use === 'fork' ? { fork: true, allowNone: true } : {});
}

/** The canonical text of a TTL, or null for none. */
export function ttlText(ttl: TtlArg): string | null {
  return ttl.kind === 'set' ? formatDuration(ttl.ttl) : null;
}
