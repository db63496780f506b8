// zod/mini: the same validation with a fraction of the import cost, which every daemon start pays.
import { z } from 'zod/mini';

/** Every op the daemon answers: the 18 of the wire protocol plus protect, unprotect, diff and gc. */
export const OPS = [
  'open',
  'flush',
  'status',
  'close',
  'shutdown',
  'subscribe',
  'create',
  'checkout',
  'fork',
  'destroy',
  'rollback',
  'promote',
  'compact',
  'touch',
  'branches',
  'dbs',
  'export',
  'checkout-at',
  'protect',
  'unprotect',
  'diff',
  'gc',
] as const;

/** One op name. */
export type Op = (typeof OPS)[number];

/**
 * A request: one JSON object per line. `branch` doubles as the fork/promote source; `name` is the checkpoint, the
 * new branch, the promote target or the export/checkout-at checkpoint, depending on the op. Unknown fields are
 * ignored so newer clients keep working against this daemon.
 */
export const RequestSchema = z.object({
  op: z.string(),
  db: z.optional(z.string()),
  branch: z.optional(z.string()),
  name: z.optional(z.string()),
  from: z.optional(z.string()),
  ttl: z.optional(z.string()),
  force: z.optional(z.boolean()),
  path: z.optional(z.string()),
  meta: z.optional(z.record(z.string(), z.string())),
  /** Additive: the right-hand target of a diff op, as `db[@branch[@checkpoint]]`. */
  to: z.optional(z.string()),
  /** Additive: gc grace as a Go duration. */
  grace: z.optional(z.string()),
  /** Additive: ask diff for counts only. */
  summary: z.optional(z.boolean()),
  /** Additive: the store the client means (canonical spelling); a daemon serving another store refuses the request. */
  store: z.optional(z.string()),
});

/** A parsed request. */
export type Request = z.infer<typeof RequestSchema>;

/** A checkpoint in BranchInfo.checkpoints_v2. */
export interface CheckpointInfo {
  name: string;
  txid: number;
  created_at?: string;
}

/** One branch as the `branches` op reports it; `shared` and `state` are always present. */
export interface BranchInfo {
  branch: string;
  head_txid: number;
  protected: boolean;
  ttl?: string;
  ttl_remaining?: string;
  lease_holder?: string;
  checkpoints: string[];
  touched_at?: string;
  checkpoints_v2: CheckpointInfo[];
  shared: boolean;
  state: string;
}

/** One open session as the `status` op reports it. */
export interface SessionInfo {
  db: string;
  branch: string;
  checkout: string;
  holder: string;
  epoch: number;
  durable_txid: number;
  durable_age?: string;
  last_flush_at?: string;
  flush_error?: string;
  /** Bytes the checkout's -wal holds that capture has not read yet (SQLite wrote them; the daemon has not seen them). */
  capture_lag_bytes: number;
  /** Additive: bytes of pages captured but not yet flushed to the store (what a crash now would lose). */
  unflushed_bytes?: number;
  error?: string;
}

/** A response line: `ok` plus the op's result fields; on failure `error` (and, additively, `code` and `hint`). */
export interface Response {
  ok: boolean;
  error?: string;
  code?: string;
  hint?: string;
  retryable?: boolean;
  checkout?: string;
  txid?: number;
  sessions?: SessionInfo[];
  branches?: BranchInfo[];
  databases?: string[];
  /** Additive result payloads (diff, gc, touch, protect). */
  result?: unknown;
}

/** The event envelope published to subscribers. */
export interface EventEnvelope {
  v: 1;
  ts: string;
  type: EventType;
  db?: string;
  branch?: string;
  detail?: Record<string, unknown>;
}

/** The event types. */
export type EventType =
  | 'session_opened'
  | 'flushed'
  | 'flush_failed'
  | 'fenced'
  | 'session_closed'
  | 'reaped'
  | 'evicted'
  | 'dropped_slow_consumer';

/** The largest request line the daemon reads (larger ones are refused). */
export const MAX_REQUEST_BYTES = 1 << 20;
