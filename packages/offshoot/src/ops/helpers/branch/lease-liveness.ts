import { hasCode } from '../../../core/errors.js';
import { livenessKey } from '../../../core/keys.js';
import { LIVENESS_ID, livenessExpiry } from '../../../core/liveness.js';
import type { Ref } from '../../../core/ref.js';
import type { OpsContext } from '../context/context.js';

/**
 * What the liveness objects some leases stand on said when read: liveness id → the object's expiry in ms, 0 when
 * there is no such object (its daemon stopped cleanly, or was never there). An id that was not read, or whose object
 * proves nothing, is absent: its lease then lasts to its own expiry, as an earlier implementation reads it.
 */
export type Liveness = ReadonlyMap<string, number>;

/** For refs read where no lease stands on a liveness object, or where the longer reading is the safe one. */
export const UNREAD_LIVENESS: Liveness = new Map();

/** The liveness id a ref's lease stands on, when it names a well-formed one. */
export function livenessIdOf(ref: Pick<Ref, 'lease_holder' | 'lease_liveness'>): string | undefined {
  const id = ref.lease_holder ? ref.lease_liveness : undefined;
  return id !== undefined && LIVENESS_ID.test(id) ? id : undefined;
}

/**
 * Reads the liveness objects the leases of refs stand on, each once (a thousand sessions of one daemon cost one
 * read); into carries what an earlier call of the same pass read.
 */
export async function readLiveness(
  ctx: OpsContext,
  refs: Iterable<Pick<Ref, 'lease_holder' | 'lease_liveness'>>,
  into: Map<string, number> = new Map(),
): Promise<Liveness> {
  const ids = new Set<string>();
  for (const r of refs) {
    const id = livenessIdOf(r);
    if (id !== undefined && !into.has(id)) ids.add(id);
  }
  await Promise.all(
    [...ids].map(async (id) => {
      try {
        const got = await ctx.store.backend.get(livenessKey(id));
        const t = livenessExpiry(got.body);
        if (t !== undefined) into.set(id, t);
      } catch (err) {
        if (hasCode(err, 'NOT_FOUND')) into.set(id, 0);
        else ctx.warn(`cannot read the liveness object ${livenessKey(id)}: ${(err as Error).message}`);
      }
    }),
  );
  return into;
}

/**
 * When a ref's lease ends, in ms: its expiry, cut short to its daemon's liveness expiry when it stands on a liveness
 * object that was read (a stale or missing one ends it then). Undefined without a lease or with an unreadable
 * expiry (which counts as expired). Every reader of lease_expiry goes through here: liveness, the reap deadline, what
 * status and the dashboard show.
 */
export function leaseEnd(
  ref: Pick<Ref, 'lease_holder' | 'lease_expiry' | 'lease_liveness'>,
  liveness: Liveness,
): number | undefined {
  if (!ref.lease_holder || !ref.lease_expiry) return undefined;
  const t = Date.parse(ref.lease_expiry);
  if (!Number.isFinite(t)) return undefined;
  const id = livenessIdOf(ref);
  const alive = id === undefined ? undefined : liveness.get(id);
  return alive === undefined ? t : Math.min(t, alive);
}

/** leaseEnd as RFC 3339, for results and JSON. */
export function leaseEndText(
  ref: Pick<Ref, 'lease_holder' | 'lease_expiry' | 'lease_liveness'>,
  liveness: Liveness,
): string | undefined {
  const end = leaseEnd(ref, liveness);
  if (end === undefined) return ref.lease_expiry;
  return end === Date.parse(ref.lease_expiry ?? '') ? ref.lease_expiry : new Date(end).toISOString();
}
