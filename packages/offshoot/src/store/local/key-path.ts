import { join } from 'node:path';
import { fail } from '../../core/errors.js';

/** Names the local backend keeps beside objects: `<key>.lock` CAS locks and `.tmp-*` half-written files. */
export const LOCK_SUFFIX = '.lock';
/** Prefix of every temp file the local backend writes before renaming it into place. */
export const TEMP_PREFIX = '.tmp-';

// A segment must leave room for the `.lock` sibling within the usual 255-byte file name limit.
const MAX_SEGMENT_BYTES = 255 - LOCK_SUFFIX.length;

/** True for directory entries that are bookkeeping, never objects: listings skip them. */
export function isHiddenName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) || name.endsWith(LOCK_SUFFIX);
}

/** Throws INVALID_ARGUMENT unless key is a relative `/`-separated path that cannot escape or shadow bookkeeping. */
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
    if (isHiddenName(seg)) throw bad(`segments may not start with "${TEMP_PREFIX}" or end with "${LOCK_SUFFIX}"`);
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
  return join(root, ...checkKey(key).split('/'));
}

/** The directory to walk for a prefix: everything up to its last `/` (the prefix may end mid-name). */
export function prefixDir(root: string, prefix: string): string {
  const cut = checkPrefix(prefix).lastIndexOf('/');
  return cut < 0 ? root : join(root, ...prefix.slice(0, cut).split('/'));
}
