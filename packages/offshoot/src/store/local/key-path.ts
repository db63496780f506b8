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

/** The key segment a directory entry stands for, or undefined for bookkeeping and names the backend never makes. */
export function keySegmentOf(name: string): string | undefined {
  return isHiddenName(name) ? undefined : segmentOfFileName(name);
}

/** The key segment a file name stores, or undefined for a name segmentFileName never makes. */
export function segmentOfFileName(name: string): string | undefined {
  if (!name.startsWith(ESCAPE)) return name;
  return name.length >= 2 * ESCAPE.length && name.endsWith(ESCAPE) ? name.slice(1, -1) : undefined;
}

function badKey(key: string, why: string): Error {
  return fail('INVALID_ARGUMENT', `invalid store key ${JSON.stringify(key)}: ${why}`, {
    hint: 'keys are /-separated relative names without empty, "." or ".." segments',
  });
}

// The segments of a key, each checked: not empty, not `.` or `..`, short enough for a file name.
function keySegments(key: string): string[] {
  if (key === '') throw badKey(key, 'empty');
  if (key.includes('\0')) throw badKey(key, 'contains NUL');
  const segs = key.split('/');
  for (const seg of segs) {
    if (seg === '') throw badKey(key, 'empty segment (leading, trailing or doubled "/")');
    if (seg === '.' || seg === '..') throw badKey(key, `"${seg}" segment`);
    // A UTF-16 unit is at most 3 UTF-8 bytes: only a long segment is worth measuring.
    if (seg.length * 3 > MAX_SEGMENT_BYTES && Buffer.byteLength(seg) > MAX_SEGMENT_BYTES)
      throw badKey(key, `segment longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  return segs;
}

/** Throws INVALID_ARGUMENT unless key is a relative `/`-separated path that cannot escape the store root. */
export function checkKey(key: string): string {
  keySegments(key);
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

/**
 * The file that holds key under root (an absolute, resolved path). The checked segments hold no `/`, `.` or `..`, so
 * joining them by hand is path.join's result without its normalizing pass, which status and GC pay once per ref.
 */
export function keyPath(root: string, key: string): string {
  let path = root.endsWith('/') ? root.slice(0, -1) : root;
  for (const seg of keySegments(key)) path += `/${segmentFileName(seg)}`;
  return path;
}

/**
 * keyPath for a run of keys that share directories (a listing's refs): each directory's path is made and checked once,
 * then only a key's last segment. A key it cannot place this way goes through keyPath whole, so a bad key fails with
 * keyPath's own error.
 */
export function keyPaths(root: string): (key: string) => string {
  const dirs = new Map<string, string>();
  return (key) => {
    const cut = key.lastIndexOf('/');
    if (cut <= 0) return keyPath(root, key);
    try {
      const dirKey = key.slice(0, cut);
      let dir = dirs.get(dirKey);
      if (dir === undefined) dirs.set(dirKey, (dir = keyPath(root, dirKey)));
      return keyPath(dir, key.slice(cut + 1));
    } catch {
      return keyPath(root, key);
    }
  };
}

/** The directory to walk for a prefix: everything up to its last `/` (the prefix may end mid-name). */
export function prefixDir(root: string, prefix: string): string {
  const cut = checkPrefix(prefix).lastIndexOf('/');
  return cut < 0 ? root : join(root, ...prefix.slice(0, cut).split('/').map(segmentFileName));
}
