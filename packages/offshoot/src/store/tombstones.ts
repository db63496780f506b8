import { fail, hasCode } from '../core/errors.js';
import { TOMBSTONES_KEY } from '../core/keys.js';
import type { Backend } from './backend.js';

/** The GC tombstone list: object key → RFC 3339 time it was found unreachable. */
export type Tombstones = Record<string, string>;

/** Reads gc/tombstones; an absent list reads as empty with no etag. */
export async function readTombstones(backend: Backend): Promise<{ stones: Tombstones; etag: string | undefined }> {
  try {
    const got = await backend.get(TOMBSTONES_KEY);
    const parsed = JSON.parse(got.body.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return { stones: parsed as Tombstones, etag: got.etag };
  } catch (err) {
    if (hasCode(err, 'NOT_FOUND')) return { stones: {}, etag: undefined };
    if (err instanceof SyntaxError || (err instanceof Error && err.message === 'not an object')) {
      throw fail('CORRUPT', 'gc/tombstones is not a JSON object', {
        hint: 'delete gc/tombstones; the next gc run rebuilds it',
      });
    }
    throw err;
  }
}

/** Writes gc/tombstones by compare-and-swap against the etag read (create-only when there was none). */
export async function writeTombstones(backend: Backend, stones: Tombstones, etag: string | undefined): Promise<void> {
  const body = Buffer.from(JSON.stringify(stones) + '\n');
  await backend.put(TOMBSTONES_KEY, body, etag === undefined ? { ifNoneMatch: true } : { ifMatch: etag });
}
