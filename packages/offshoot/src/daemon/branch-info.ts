import type { BranchState, BranchStatus } from '../ops/branch-view.js';
import type { WireBranchInfo } from '../protocol/wire.js';
import type { Slot } from './session-table.js';

/**
 * The state the daemon reports for a branch: its own knowledge first (error: the session here has a terminal
 * error; pending: an open is in flight), then the at-rest state computed from the ref and the checkout.
 */
export function daemonState(atRest: BranchState, slot: Slot | undefined): BranchState {
  if (slot === undefined) return atRest;
  if (slot.state === 'pending') return 'pending';
  return slot.session.error ? 'error' : atRest;
}

/** A branch in wire form; `shared` and `state` are always present, and no meta value is ever included. */
export function branchInfo(b: BranchStatus, state: BranchState): WireBranchInfo {
  return {
    branch: b.branch,
    head_txid: b.txid,
    protected: b.protected,
    ...(b.ttl !== undefined ? { ttl: b.ttl } : {}),
    ...(b.remaining !== undefined ? { ttl_remaining: b.remaining } : {}),
    ...(b.expiresAt !== undefined ? { expires_at: b.expiresAt } : {}),
    ...(b.reapPostponed !== undefined ? { reap_postponed: b.reapPostponed } : {}),
    ...(b.leaseHolder !== undefined ? { lease_holder: b.leaseHolder } : {}),
    checkpoints: b.checkpoints,
    ...(b.touchedAt !== undefined ? { touched_at: b.touchedAt } : {}),
    checkpoints_v2: b.checkpointsV2.map((c) => ({
      name: c.name,
      txid: c.txid,
      ...(c.createdAt !== undefined ? { created_at: c.createdAt } : {}),
    })),
    shared: b.storage === 'shared',
    state,
    ...(b.ephemeral ? { ephemeral: true } : {}),
  };
}
