import { fingerprintOf } from '../checkout-sidecar.js';

/** Files whose counts are kept: a long-lived process diffing many forks against a few seeds needs only a few. */
const MAX_FILES = 64;

const memo = new Map<string, Map<string, number>>();

/**
 * The row counts known for a file that does not change while its fingerprint (path, size, mtime, inode) stays the
 * same — a sealed cache entry or a checkout proven clean — shared by every diff in this process, so diffing many
 * forks against one seed counts the seed's rows once. The least recently used file is forgotten past MAX_FILES.
 */
export function rowCountsOf(path: string): Map<string, number> {
  const fp = fingerprintOf(path);
  const key = `${path}\0${fp.size}\0${fp.mtime_ns}\0${fp.ino}`;
  let counts = memo.get(key);
  if (counts === undefined) counts = new Map();
  else memo.delete(key);
  memo.set(key, counts);
  for (const old of memo.keys()) {
    if (memo.size <= MAX_FILES) break;
    memo.delete(old);
  }
  return counts;
}
