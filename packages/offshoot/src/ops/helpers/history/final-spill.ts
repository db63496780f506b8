import { encodeLogRecords } from '../../../core/history.js';
import { logObjectKey } from '../../../core/keys.js';
import type { Target } from '../../../core/target.js';
import type { VersionedRef } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';
import { logged } from './record.js';

/**
 * The last writes of a branch before its ref is deleted: its destroy (or reap) record is committed to the ref by
 * compare-and-swap, then the whole tail, that record last, is spilled as the incarnation's final log object. Only
 * committed records are ever spilled, so a destroy that fails after this leaves a log that says so and nothing a
 * later record could contradict; the ref then deleted is the one returned. After the ref is gone its log is read
 * from `log/{db}/{branch}/{log_id}/`, the final record naming who destroyed it.
 */
export async function spillFinal(
  ctx: OpsContext,
  t: Target,
  claimed: VersionedRef,
  op: 'destroy' | 'reap',
  discarded: string | undefined,
): Promise<VersionedRef> {
  const next = await logged(ctx, t.db, t.branch, op, claimed.ref, claimed.ref, {
    ...(discarded !== undefined ? { discarded } : {}),
  });
  const etag = await ctx.store.casRef(t.db, t.branch, claimed.etag, next);
  const tail = next.log ?? [];
  const first = tail[0];
  const last = tail.at(-1);
  if (next.log_id !== undefined && first !== undefined && last !== undefined) {
    const key = logObjectKey(t.db, t.branch, next.log_id, first.seq, last.seq, Date.parse(last.at));
    await ctx.store.putLogObject(key, encodeLogRecords(tail));
  }
  return { ref: next, etag };
}
