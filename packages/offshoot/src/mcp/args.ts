import { branchOf } from '@offshoot/tools';
import { formatDuration, parseTtl, type TtlArg } from '../core/duration.js';
import { fail } from '../core/errors.js';
import { parseMoment } from '../core/moment.js';
import { nameHint, nameProblem } from '../core/names.js';

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

/** The branch an optional argument names, resolved as the catalogue resolves it (main when omitted), checked. */
export function branchOr(arg: string, value: string | undefined): string {
  return nameArg(arg, branchOf(value));
}

/** Parses a TTL argument with the one grammar (core parseTtl): on a fork `none` means never and zero is refused. */
export function ttlArg(value: string | undefined, use: 'touch' | 'fork' = 'touch'): TtlArg {
  return parseTtl(value, use === 'fork' ? { fork: true, allowNone: true } : {});
}

/** The canonical text of a TTL, or null for none. */
export function ttlText(ttl: TtlArg): string | null {
  return ttl.kind === 'set' ? formatDuration(ttl.ttl) : null;
}
