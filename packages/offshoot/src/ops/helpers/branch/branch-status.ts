import type { ErrorCode } from '../../../core/errors.js';
import type { Meta } from '../../../core/meta.js';
import type { BranchState } from './branch-state.js';
import type { ReapHold } from './reap-hold.js';
import type { UndoTag } from './undo-point-names.js';

/** One checkpoint as status reports it. */
export interface CheckpointStatus {
  name: string;
  txid: number;
  createdAt: string | undefined;
  meta: Meta | undefined;
}

/**
 * The one view of a branch: the CLI's `status --json`, the wire's `branches`, MCP `offshoot_list` and the dashboard's
 * API all derive their shapes from it (each keeps its own key names), so no surface computes a field of its own.
 */
export interface BranchStatus {
  db: string;
  branch: string;
  state: BranchState;
  storage: 'shared' | 'materialized';
  txid: number;
  /** Checkpoint names, oldest txid first. */
  checkpoints: string[];
  checkpointsV2: CheckpointStatus[];
  protected: boolean;
  checkedOut: boolean;
  ttl: string | undefined;
  /** Time left before the branch may be reaped, or `expired`. */
  remaining: string | undefined;
  /** When the branch may be reaped (RFC 3339), by the reaper's rule; undefined without a TTL or while protected. */
  expiresAt?: string;
  /** Expired, but the reap waits: why (see ReapHold). */
  reapPostponed?: ReapHold;
  leaseHolder: string | undefined;
  leaseExpiry: string | undefined;
  touchedAt: string | undefined;
  parent: string | undefined;
  meta: Meta | undefined;
  /** Set on an undo point: the kind offshoot made and the branch whose earlier state it keeps (see undoCommand). */
  undo?: UndoTag;
  /** Held by the daemon that made it until kept; gone with that daemon (absent for every durable branch). */
  ephemeral?: true;
}

/** A branch whose ref cannot be read: listed by name so every other branch still shows. */
export interface UnreadableRef {
  db: string;
  branch: string;
  code: ErrorCode;
  error: string;
  hint: string | undefined;
}
