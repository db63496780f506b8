import { hasCode } from '../core/errors.js';
import { inBatches } from '../core/in-batches.js';
import type { Backend, GetResult } from './backend.js';

/** Requests in flight at once: enough to overlap a remote store's round trips without flooding its connection pool. */
export const GET_EACH_CONCURRENCY = 16;

/** getMany as one get per key, `limit` at a time, a missing key undefined: for a backend whose reads are round trips. */
export async function getEach(
  backend: Pick<Backend, 'get'>,
  keys: readonly string[],
  limit = GET_EACH_CONCURRENCY,
): Promise<Array<GetResult | undefined>> {
  const out: Array<GetResult | undefined> = new Array(keys.length);
  await inBatches(keys, limit, async (key, i) => {
    try {
      out[i] = await backend.get(key);
    } catch (err) {
      if (!hasCode(err, 'NOT_FOUND')) throw err;
    }
  });
  return out;
}
