import { fail } from '../core/errors.js';

const SUFFIXES: Array<[string, number]> = [
  ['TB', 2 ** 40],
  ['T', 2 ** 40],
  ['GB', 2 ** 30],
  ['G', 2 ** 30],
  ['MB', 2 ** 20],
  ['M', 2 ** 20],
  ['KB', 2 ** 10],
  ['K', 2 ** 10],
  ['B', 1],
];

/**
 * Parses a byte count: a bare non-negative integer, or one with a K/KB/M/MB/G/GB/T/TB suffix (1024-based,
 * case-insensitive; a bare B is bytes). Zero means unlimited; negatives and sizes past 2^53 are refused.
 */
export function parseByteSize(text: string, flag: string): number {
  const bad = (why: string) =>
    fail('INVALID_ARGUMENT', `${flag} ${JSON.stringify(text)}: ${why}`, {
      hint: `write ${flag} as bytes or with a K, M, G or T suffix, e.g. 512M`,
    });
  let s = text.trim();
  let mult = 1;
  const upper = s.toUpperCase();
  for (const [suffix, m] of SUFFIXES) {
    if (upper.endsWith(suffix)) {
      mult = m;
      s = s.slice(0, -suffix.length).trim();
      break;
    }
  }
  if (s.startsWith('-')) throw bad('must be zero or positive (zero means unlimited)');
  if (!/^[0-9]+$/.test(s)) throw bad('not a byte count');
  const n = Number(s) * mult;
  if (!Number.isSafeInteger(n)) throw bad('size too large');
  return n;
}
