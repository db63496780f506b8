import { statSync } from 'node:fs';
import { type PageSums, pageSumsPath, readPageSums, sameStamp } from '../../../sqlite/page-sums.js';

/** Bytes of sealed cache entries' page sums one process keeps decoded (a 1 GiB database's are 4 MiB). */
const KEPT_BYTES = 64 * 1024 * 1024;
/** Decoded sums by cache entry path, least recently used first. */
const kept = new Map<string, PageSums>();
let keptBytes = 0;

function bytesOf(s: PageSums): number {
  return s.sums.byteLength + (s.hashes?.byteLength ?? 0);
}

function forget(entry: string): void {
  const s = kept.get(entry);
  if (s === undefined) return;
  kept.delete(entry);
  keptBytes -= bytesOf(s);
}

function keep(entry: string, s: PageSums): void {
  if (bytesOf(s) > KEPT_BYTES) return;
  kept.set(entry, s);
  keptBytes += bytesOf(s);
  for (const [oldest] of kept) {
    if (keptBytes <= KEPT_BYTES) break;
    forget(oldest);
  }
}

/**
 * A sealed cache entry's page sums, or undefined when its `.pages` file is missing or unreadable: read and decoded
 * once per process while that file is unchanged (an entry's sums are immutable; every session's open and checkout
 * reads them, 4 MiB at 1 GiB), each caller handed a view of its own over the same arrays (PageSums.view: a session
 * copies the sums it was seeded with before its first write to them).
 */
export async function entryPageSums(entry: string): Promise<PageSums | undefined> {
  const st = statSync(pageSumsPath(entry), { bigint: true, throwIfNoEntry: false });
  const hit = kept.get(entry);
  if (st === undefined) {
    forget(entry);
    return undefined;
  }
  if (hit?.file !== undefined && sameStamp(st, hit.file)) {
    kept.delete(entry);
    kept.set(entry, hit);
    return hit.view();
  }
  forget(entry);
  const read = await readPageSums(entry);
  if (read === undefined) return undefined;
  keep(entry, read);
  return read.view();
}
