import { hasCode } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import type { Body } from '../../../store/backend.js';
import type { VersionedRef } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';

/** What the caller of an upload that may bump the epoch hears of it, and how it orders that ref write. */
export interface EpochBumpHooks {
  /** Told the new epoch before anything else of the caller's may write the ref again. */
  onEpoch?: (epoch: number) => void;
  /** Runs the bump beside the caller's other writers of the ref (a session's lease renewals), never among them. */
  serialize?: <T>(write: () => Promise<T>) => Promise<T>;
}

/** Attempts of an epoch bump that met a ref moved only by its lease holder's renewals. */
const BUMP_ATTEMPTS = 4;

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
  hooks: EpochBumpHooks = {},
): Promise<{ key: string; current: VersionedRef }> {
  const serialize = hooks.serialize ?? (<T>(write: () => Promise<T>) => write());
  let vref = cur;
  for (let attempt = 0; ; attempt++) {
    const key = keyFor(vref.ref.epoch);
    try {
      await ctx.store.putData(key, body);
      return { key, current: vref };
    } catch (err) {
      if (!hasCode(err, 'ALREADY_EXISTS') || attempt >= 3) throw err;
    }
    const from = vref;
    vref = await serialize(async () => {
      const bumped = await bumpEpoch(ctx, db, branch, from);
      hooks.onEpoch?.(bumped.ref.epoch);
      return bumped;
    });
  }
}

/**
 * Moves the ref to the next epoch by compare-and-swap. The ref read before the upload may since have been renewed
 * by its lease holder (a session renews while it flushes): that, and only that, is re-read and bumped again.
 */
async function bumpEpoch(ctx: OpsContext, db: string, branch: string, cur: VersionedRef): Promise<VersionedRef> {
  let vref = cur;
  for (let attempt = 1; ; attempt++) {
    const next = { ...vref.ref, epoch: vref.ref.epoch + 1 };
    try {
      const etag = await ctx.store.casRef(db, branch, vref.etag, next);
      return { ref: { ...next, generation: (next.generation ?? 0) + 1 }, etag };
    } catch (err) {
      if (!hasCode(err, 'CAS_CONFLICT') || attempt >= BUMP_ATTEMPTS) throw err;
      const now = await ctx.store.getRef(db, branch);
      if (!sameHolderAndHead(vref.ref, now.ref)) throw err;
      vref = now;
    }
  }
}

/** True when b has a's holder, epoch and head: whatever else moved (a renewal's expiry), the bump fences the same writers. */
function sameHolderAndHead(a: Ref, b: Ref): boolean {
  return (
    a.lease_holder === b.lease_holder &&
    a.epoch === b.epoch &&
    a.lineage === b.lineage &&
    a.head_txid === b.head_txid &&
    a.head_epoch === b.head_epoch
  );
}
