import { z } from 'zod';
import { fail } from '../core/errors.js';
import { formatDuration, parseDuration, type TtlArg } from '../core/duration.js';
import { META_LIMITS } from '../core/meta.js';
import { nameProblem } from '../core/names.js';
import { MAIN_BRANCH } from '../core/target.js';

/** The required `database` argument. */
export const databaseArg = z.string().describe('database name (as created with `offshoot create`)');

/** An optional branch argument that defaults to main. */
export function branchArg(what: string): z.ZodOptional<z.ZodString> {
  return z.string().optional().describe(`${what} (default "${MAIN_BRANCH}")`);
}

/** `meta`: string tags, bounded like the store bounds them. */
export const metaArg = z
  .record(z.string().max(META_LIMITS.maxKeyBytes), z.string().max(META_LIMITS.maxValueBytes))
  .optional()
  .describe(`string tags (run id, git SHA, agent name): at most ${META_LIMITS.maxKeys} keys`);

/** Checks a name argument, failing with `invalid <arg> "<value>": <problem>`. */
export function nameArg(arg: string, value: string): string {
  const problem = nameProblem(value);
  if (problem !== undefined) {
    throw fail('INVALID_NAME', `invalid ${arg} ${JSON.stringify(value)}: ${problem}`, {
      hint: 'names are 1-128 characters of a-z, 0-9, "-", "_" and "."',
    });
  }
  return value;
}

/** The branch an optional argument names: the value checked, else main. */
export function branchOr(arg: string, value: string | undefined): string {
  return value === undefined ? MAIN_BRANCH : nameArg(arg, value);
}

/** Parses a TTL argument: `none` clears (or, on fork, means never), a positive Go duration sets, anything else fails. */
export function ttlArg(value: string | undefined): TtlArg {
  if (value === undefined) return { kind: 'keep' };
  if (value === 'none') return { kind: 'none' };
  const d = parseDuration(value);
  if (d <= 0n)
    throw fail('INVALID_ARGUMENT', `invalid ttl ${JSON.stringify(value)}: must be positive`, {
      hint: 'pass a positive duration such as "2h", or "none" for no TTL',
    });
  return { kind: 'set', ttl: d };
}

/** The canonical text of a TTL, or null for none. */
export function ttlText(ttl: TtlArg): string | null {
  return ttl.kind === 'set' ? formatDuration(ttl.ttl) : null;
}
