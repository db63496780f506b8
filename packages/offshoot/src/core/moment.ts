import { durationMs, parseDuration } from './duration.js';
import { fail } from './errors.js';

/**
 * A durable moment of a branch named where a checkpoint is taken: `tx:42`, the branch at txid 42, or
 * `at:2026-12-07T10:00:00Z`, the branch as it was at that time (the last durable txid at or before it). `:` is
 * outside the name alphabet, so no checkpoint is ever read as one, and an implementation that knows only
 * checkpoints refuses both as invalid names.
 */
export type Moment = { kind: 'tx'; txid: number; text: string } | { kind: 'at'; at: Date; text: string };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** True when text is spelled as a moment (`tx:` or `at:` first), whether or not the rest is valid. */
export function looksLikeMoment(text: string): boolean {
  return text.startsWith('tx:') || text.startsWith('at:');
}

/** Parses an RFC 3339 time; INVALID_ARGUMENT naming `what` otherwise. */
export function parseTime(text: string, what: string): Date {
  const ms = RFC3339.test(text) ? Date.parse(text.replace(' ', 'T')) : Number.NaN;
  if (!Number.isFinite(ms))
    throw fail('INVALID_ARGUMENT', `${what} ${JSON.stringify(text)} is not an RFC 3339 time`, {
      hint: 'write the time as 2026-12-07T10:00:00Z (or with an offset, +02:00)',
    });
  return new Date(ms);
}

/** Parses `tx:N` or `at:<RFC 3339>`; undefined for anything not spelled as a moment (a checkpoint name). */
export function parseMoment(text: string): Moment | undefined {
  if (text.startsWith('tx:')) {
    const n = text.slice(3);
    if (!/^[0-9]{1,15}$/.test(n) || Number(n) < 1)
      throw fail(
        'INVALID_ARGUMENT',
        `invalid moment ${JSON.stringify(text)}: tx: takes a txid (a whole number from 1)`,
        {
          hint: 'write the moment as tx:42, or at:2026-12-07T10:00:00Z',
        },
      );
    return { kind: 'tx', txid: Number(n), text };
  }
  if (text.startsWith('at:')) return { kind: 'at', at: parseTime(text.slice(3), 'moment'), text };
  return undefined;
}

/** A `since` bound: an RFC 3339 time, or a duration (`2h`) counted back from now. */
export function parseSince(text: string, now: Date): Date {
  if (/^[0-9.]+[a-z\u00b5\u03bc]/.test(text) && !RFC3339.test(text)) {
    const ms = durationMs(parseDuration(text));
    return new Date(now.getTime() - ms);
  }
  return parseTime(text, 'since');
}
