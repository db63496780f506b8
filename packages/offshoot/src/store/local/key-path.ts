import { join } from 'node:path';
import { fail } from '../../core/errors.js';

/** Names the local backend keeps beside objects: `<file>.lock` CAS locks and `.tmp-*` half-written files. */
export const LOCK_SUFFIX = '.lock';
/** Prefix of every temp file the local backend writes before renaming it into place. */
export const TEMP_PREFIX = '.tmp-';
/**
 * Marks a key segment stored under another file name: one that would read as bookkeeping (ends in `.lock`, starts
 * with `.tmp-`) or that starts with the marker itself is stored as `%<segment>%`, which is neither.
 */
const ESCAPE = '%';

// A file name must leave room for the escape marks and the `.lock` sibling within the usual 255-byte limit.
const MAX_SEGMENT_BYTES = 255 - LOCK_SUFFIX.length - 2 * ESCAPE.length;

/** True for directory entries that are bookkeeping, never objects: listings skip them. */
export function isHiddenName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) || name.endsWith(LOCK_SUFFIX);
}

/**
 * The file name of one key segment. Every segment is a valid key part, including `x.lock` and `.tmp-x` (both valid
 * branch and database names): those are stored escaped, so no object's file is ever another object's lock or a
 * temp file, and every other name is stored as itself (the layout of existing stores is unchanged).
 */
export function segmentFileName(seg: string): string {
  return isHiddenName(seg) || seg.startsWith(ESCAPE) ? ESCAPE + seg + ESCAPE : seg;
}

/** The key segment a file name stores, or undefined for a name segmentFileName never makes. */
export function segmentOfFileName(name: string): string | undefined {
  if (!name.startsWith(ESCAPE)) return name;
  return name.length >= 2 * ESCAPE.length && name.endsWith(ESCAPE) ? name.slice(1, -1) : undefined;
}

/** Throws INVALID_ARGUMENT unless key is a relative `/`-separated path that cannot escape the store root. */
export function checkKey(key: string): string {
  const bad = (why: string) =>
    fail('INVALID_ARGUMENT', `invalid store key ${JSON.stringify(key)}: ${why}`, {
      hint: 'keys are /-separated relative names without empty, "." or ".." segments',
    });
  if (key === '') throw bad('empty');
  if (key.includes('\0')) throw bad('contains NUL');
  for (const seg of key.split('/')) {
    if (seg === '') throw bad('empty segment (leading, trailing or doubled "/")');
    if (seg === '.' || seg === '..') throw bad(`"${seg}" segment`);
    if (Buffer.byteLength(seg) > MAX_SEGMENT_BYTES) throw bad(`segment longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  return key;
}

/** Throws INVALID_ARGUMENT for a list prefix that could walk outside the store root. */
export function checkPrefix(prefix: string): string {
  if (prefix.startsWith('/') || prefix.includes('\0') || prefix.split('/').some((seg) => seg === '..' || seg === '.')) {
    throw fail('INVALID_ARGUMENT', `invalid list prefix ${JSON.stringify(prefix)}`, {
      hint: 'a prefix is the start of a relative key, without "." or ".." segments',
    });
  }
  return prefix;
}

/** The file that holds key under root. */
export function keyPath(root: string, key: string): string {
  return join(root, ...checkKey(key).split('/').map(segmentFileName));
}

/** The directory to walk for a prefix: everything up to its last `/` (the prefix may end mid-name). */
export function prefixDir(root: string, prefix: string): string {
  const cut = checkPrefix(prefix).lastIndexOf('/');
  return cut < 0 ? root : join(root, ...prefix.slice(0, cut).split('/').map(segmentFileName));
}
