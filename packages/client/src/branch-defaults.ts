import type { BranchInfo, CheckpointInfo, WireBranchInfo, WireCheckpointInfo } from './types.js';

type WireBranch = Partial<WireBranchInfo> & { branch: string };

/**
 * One `branches` entry with the fields an older daemon leaves out filled in as the earlier client did: strings
 * `""`, numbers 0, flags false, lists empty.
 */
export function normalizeBranch(raw: WireBranch): BranchInfo {
  return {
    ...raw,
    branch: raw.branch,
    head_txid: raw.head_txid ?? 0,
    protected: raw.protected ?? false,
    ttl: raw.ttl ?? '',
    ttl_remaining: raw.ttl_remaining ?? '',
    lease_holder: raw.lease_holder ?? '',
    checkpoints: raw.checkpoints ?? [],
    touched_at: raw.touched_at ?? '',
    checkpoints_v2: (raw.checkpoints_v2 ?? []).map(
      (cp: Partial<WireCheckpointInfo> & { name: string }): CheckpointInfo => ({
        ...cp,
        name: cp.name,
        txid: cp.txid ?? 0,
        created_at: cp.created_at ?? '',
      }),
    ),
    shared: raw.shared ?? false,
    state: raw.state ?? '',
  };
}
