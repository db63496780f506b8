import { fail, hasCode } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import type { OpsContext } from '../context/context.js';

/**
 * Swaps a branch's ref for its repointed version by compare-and-swap. Losing the race is reported as such
 * (retryable); any other failure (a store that did not answer) keeps its own code.
 */
export async function casRepoint(
  ctx: OpsContext,
  db: string,
  branch: string,
  etag: string,
  next: Ref,
  verb: string,
): Promise<void> {
  try {
    await ctx.store.casRef(db, branch, etag, next);
  } catch (err) {
    if (!hasCode(err, 'CAS_CONFLICT')) throw err;
    throw fail('CAS_CONFLICT', `${verb} of ${db}@${branch} lost a race: the branch changed meanwhile`, {
      retryable: true,
      hint: `retry the ${verb}`,
      cause: err,
    });
  }
}
