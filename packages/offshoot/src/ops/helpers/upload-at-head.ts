import { hasCode } from '../../core/errors.js';
import type { Body } from '../../store/backend.js';
import type { VersionedRef } from '../../store/store.js';
import type { OpsContext } from './context.js';

/**
 * Uploads the next object of a branch create-only under the ref's current epoch. A key that already exists can only
 * be the orphan of a crashed or losing attempt at this epoch; rather than overwrite it (a racing writer may own it),
 * the branch's epoch is bumped by compare-and-swap and the object lands under the new epoch, where it wins dedup.
 */
export async function uploadAtHead(
  ctx: OpsContext,
  db: string,
  branch: string,
  cur: VersionedRef,
  keyFor: (epoch: number) => string,
  body: Body,
  onEpoch?: (epoch: number) => void,
): Promise<{ key: string; current: VersionedRef }> {
  let vref = cur;
  for (let attempt = 0; ; attempt++) {
    const key = keyFor(vref.ref.epoch);
    try {
      await ctx.store.putData(key, body);
      return { key, current: vref };
    } catch (err) {
      if (!hasCode(err, 'ALREADY_EXISTS') || attempt >= 3) throw err;
    }
    const next = { ...vref.ref, epoch: vref.ref.epoch + 1 };
    const etag = await ctx.store.casRef(db, branch, vref.etag, next);
    vref = { ref: { ...next, generation: (next.generation ?? 0) + 1 }, etag };
    onEpoch?.(next.epoch);
  }
}
