import { existsSync } from 'node:fs';
import type { Ref } from '../../../core/ref.js';
import { checkClean, readSidecar } from '../../../sqlite/checkout-sidecar.js';
import { leaseLive } from './branch-ref.js';
import type { Liveness } from './lease-liveness.js';

/** The six branch states, in precedence order; `error` and `pending` only a daemon reports. */
export type BranchState = 'error' | 'pending' | 'active' | 'dirty' | 'detached' | 'idle';

/**
 * The at-rest state of a branch, computed without reading the database: active (live lease), detached (the
 * checkout holds another lineage), dirty (same lineage, changed since materialized or checkpointed — by the O(1)
 * fingerprint, or uncheckpointed -wal content), idle otherwise (no checkout, no sidecar, or merely stale). `exists`
 * is whether the checkout exists, when the caller already knows.
 */
export async function branchState(
  ref: Ref,
  checkout: string,
  now: Date,
  liveness: Liveness,
  exists?: boolean,
): Promise<BranchState> {
  if (leaseLive(ref, now, liveness)) return 'active';
  if (!(exists ?? existsSync(checkout))) return 'idle';
  const sc = readSidecar(checkout);
  if (sc === undefined) return 'idle';
  if (sc.lineage !== ref.lineage) return 'detached';
  const verdict = await checkClean(checkout, sc);
  if (verdict === 'modified') return 'dirty';
  return 'idle';
}
