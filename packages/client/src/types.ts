/**
 * Every op the daemon answers: the 18 of the wire protocol plus protect, unprotect, diff, gc, checkpoint, query,
 * check, log and merge.
 * This package owns the wire types; the daemon's protocol layer imports them from here.
 */
export type Op =
  | 'open'
  | 'flush'
  | 'status'
  | 'close'
  | 'shutdown'
  | 'subscribe'
  | 'create'
  | 'checkout'
  | 'fork'
  | 'destroy'
  | 'rollback'
  | 'promote'
  | 'compact'
  | 'touch'
  | 'branches'
  | 'dbs'
  | 'export'
  | 'checkout-at'
  | 'protect'
  | 'unprotect'
  | 'diff'
  | 'gc'
  | 'checkpoint'
  | 'query'
  | 'check'
  | 'log'
  | 'merge';

/**
 * One request line. `branch` doubles as the fork/promote source; `name` is the checkpoint, the new branch, the
 * promote target or the export/checkout-at checkpoint, depending on the op.
 */
export interface WireRequest {
  op: Op;
  db?: string;
  branch?: string;
  name?: string;
  from?: string;
  ttl?: string;
  force?: boolean;
  path?: string;
  meta?: Record<string, string>;
  /** Additive: the right-hand target of a diff op, as `db[@branch[@checkpoint]]`. */
  to?: string;
  /** Additive: gc grace as a Go duration. */
  grace?: string;
  /** Additive: ask diff for counts only. */
  summary?: boolean;
  /** Additive: limit a diff to one table (and the schema changes of it, its indexes and triggers). */
  table?: string;
  /**
   * Additive: the store this request is meant for (its canonical spelling: the real absolute path of a local store,
   * or `s3://bucket[/prefix]`); a daemon serving another store refuses the request. Older daemons ignore it.
   */
  store?: string;
  /**
   * Additive: a batch fork's new branch names, instead of `name`. All or nothing: every name is checked before any
   * fork is written, and a failure withdraws the forks already made. Older daemons ignore it (and then refuse the
   * request for its missing `name`).
   */
  names?: string[];
  /**
   * Additive: who asks. Absent means a human; `agent` applies the agent rules (force only with `allow_force`, the
   * undo points of protected branches left alone, no discarding of uncheckpointed writes). Older daemons ignore it.
   */
  actor?: 'agent';
  /** Additive: with `actor: "agent"`, the agent may force (what `offshoot mcp -allow-force` allows). */
  allow_force?: boolean;
  /** Additive: checkout re-materializes the head over uncheckpointed writes, dropping them. */
  discard?: boolean;
  /**
   * Additive: checkout answers the live path of a healthy session open on the branch in this daemon (with
   * `live: true`) instead of refusing the branch; an agent gets it only where it may have a writable checkout. Older
   * daemons ignore it.
   */
  live?: boolean;
  /** Additive: the one read-only SQL statement of a query op. */
  sql?: string;
  /**
   * Additive: the most rows a query op returns; the most branches a branches op lists; the most row changes of each
   * kind a diff op lists per table. Older daemons ignore it.
   */
  limit?: number;
  /** Additive: a branches op lists only branches in one of these states. Older daemons ignore it. */
  state?: BranchState[];
  /**
   * Additive: the verb a `check` op runs the refusals of, with that verb's own fields beside it; the op changes
   * nothing. Older daemons refuse the op (unknown), never run the verb.
   */
  verb?: CheckedVerb;
  /**
   * Additive: a promote op is a compare-and-swap on the target: it goes ahead only while the target's head is this
   * txid and its checkout holds nothing uncheckpointed, else fails `BASE_MOVED` changing nothing. Older daemons
   * ignore it (and promote anyway): the client refuses to send it to a daemon that does not say it knows it.
   */
  if_head?: number;
  /**
   * Additive: a fork op makes ephemeral branches, held by the daemon until kept (a named checkpoint or flush, a
   * promote) and gone with it; the daemon echoes `ephemeral: true` in its answer. Older daemons ignore it (and make a
   * durable fork): the client refuses an answer without the echo.
   */
  ephemeral?: boolean;
  /** Additive: the branch a merge op merges `branch` into. Older daemons refuse the op (unknown). */
  into?: string;
  /**
   * Additive: how a merge op resolves rows both sides changed differently: `source` takes the source's, `target`
   * keeps the target's. Absent, a merge with conflicts lists them and changes nothing.
   */
  prefer?: 'source' | 'target';
  /**
   * Additive: a merge op's own rows for conflicts (see ResolvedRow); `prefer`, when given too, settles the rest.
   * Older daemons ignore it and report the conflicts, changing nothing.
   */
  resolved?: ResolvedRow[];
  /**
   * Additive: who asked, for the branch log's records: the surface (`sdk:<adapter>/<framework>`, `mcp:<tool>`, `cli`;
   * the daemon records `daemon` when absent) and the actor's own tags (run id, agent name: at most 8, values up to
   * 128 bytes). The actor is `actor`. Older daemons ignore it.
   */
  origin?: WireOrigin;
  /** Additive: a log op keeps the records at or after this time (RFC 3339). */
  since?: string;
  /** Additive: a log op keeps this actor's records only. */
  by?: 'human' | 'agent';
}

/** The `origin` of a request: through what it was asked, and the actor's tags. */
export interface WireOrigin {
  surface?: string;
  meta?: Record<string, string>;
}

/** The verbs a `check` op answers: whether this call would go ahead now, or the refusal it would get. */
export type CheckedVerb = 'rollback' | 'promote' | 'merge' | 'destroy';

/** A checkpoint as the `branches` op sends it. */
export interface WireCheckpointInfo {
  name: string;
  txid: number;
  /** RFC 3339; absent for checkpoints written before creation times were recorded. */
  created_at?: string;
}

/** A checkpoint as `branches` returns it: `created_at` is `""` where the daemon sent none, as the earlier client had it. */
export interface CheckpointInfo extends WireCheckpointInfo {
  created_at: string;
}

/** The six branch states, in precedence order: error > pending > active > dirty > detached > idle. */
export type BranchState = 'error' | 'pending' | 'active' | 'dirty' | 'detached' | 'idle';

/** One branch as the `branches` op sends it: a field the branch lacks, or an older daemon does not know, is left out. */
export interface WireBranchInfo {
  branch: string;
  head_txid: number;
  protected: boolean;
  /** The TTL as a Go duration (`1h0m0s`); absent when the branch has none. */
  ttl?: string;
  /** Time left as a Go duration, or `expired`. */
  ttl_remaining?: string;
  /** Additive: when the branch may be reaped (RFC 3339), by the reaper's rule; absent without a TTL or while protected. */
  expires_at?: string;
  /**
   * Additive: expired, but the reap waits while the checkout holds writes no checkpoint has (`uncheckpointed_writes`)
   * or cannot be proven clean (`unverified_checkout`); absent otherwise.
   */
  reap_postponed?: 'uncheckpointed_writes' | 'unverified_checkout' | 'open_connection';
  lease_holder?: string;
  /** Checkpoint names, oldest first. */
  checkpoints: string[];
  touched_at?: string;
  checkpoints_v2: WireCheckpointInfo[];
  /** True when the branch still shares objects with the branch it was forked from. */
  shared: boolean;
  /** `""` from an older daemon that does not report states. */
  state?: BranchState | '';
  /** Additive: an ephemeral branch, held by this daemon until kept and gone with it; absent for a durable one. */
  ephemeral?: boolean;
}

/**
 * One branch as `branches` returns it, typed as the earlier client typed it: every string field it had is a string,
 * `""` when the branch has none (no TTL, no lease) or the daemon sent none; `expires_at` (ours) stays optional.
 */
export interface BranchInfo extends WireBranchInfo {
  /** The TTL as a Go duration (`1h0m0s`); `""` when the branch has none. */
  ttl: string;
  /** Time left as a Go duration, or `expired`; `""` without a TTL. */
  ttl_remaining: string;
  /** `hostname/pid` of the lease holder; `""` when nobody holds the lease. */
  lease_holder: string;
  /** RFC 3339; `""` when the daemon sent none. */
  touched_at: string;
  checkpoints_v2: CheckpointInfo[];
  /** `""` from an older daemon that does not report states. */
  state: BranchState | '';
}

/** One open session as the `status` op reports it. */
export interface SessionInfo {
  db: string;
  branch: string;
  /** The writable checkout path the session captures. */
  checkout: string;
  /** `hostname/pid` of the daemon holding the lease. */
  holder: string;
  epoch: number;
  /** The last txid known durable in the store. */
  durable_txid: number;
  /** How long ago the session was last durable, as a Go duration. */
  durable_age?: string;
  /** RFC 3339 time of the last successful flush. */
  last_flush_at?: string;
  /** The last background flush failure, cleared by a later success. */
  flush_error?: string;
  /** Bytes of the checkout's -wal that SQLite wrote but the daemon has not captured yet. */
  capture_lag_bytes: number;
  /** Bytes of pages captured but not yet flushed to the store (absent from daemons before this field). */
  unflushed_bytes?: number;
  /** A terminal error (for example fenced); the session stays listed until closed. */
  error?: string;
  /**
   * Additive: true while the daemon has evicted the session to stay within its open-checkout budget (`serve
   * -max-open`): lease held and renewed, no descriptor open on the checkout; the next write or request reconnects it.
   */
  evicted?: boolean;
  /** Additive: the session's branch is ephemeral, held by this daemon until kept and gone with it. */
  ephemeral?: boolean;
}

/** What `touch` reports. */
export interface TouchResult {
  /** The TTL now in force as a Go duration, or `none`. */
  ttl: string;
  touched_at: string;
  /** Additive: when the branch now expires unless touched again (RFC 3339); absent without a TTL. */
  expires_at?: string;
}

/** What `rollback` reports in `result`, beside the refreshed checkout path. */
export interface RollbackResult {
  checkpoint: string;
  /** The branch's new head: the checkpoint's txid. */
  txid: number;
  /** The undo point that keeps the previous head (`<branch>-pre-rollback`). */
  backup: string;
  /** Additive: where the earlier undo point was kept (`<branch>-pre-rollback-<n>`), when it held the only copy of its state. */
  earlier_backup?: string;
  /** The txids above the checkpoint that the branch no longer reaches, if any. */
  abandoned: { from: number; to: number } | null;
  /** False when the checkout could not be refreshed (`refresh_error` says why) or there was none. */
  refreshed: boolean;
  /** Why an existing checkout could not be refreshed (busy); also the last of `warnings`. */
  refresh_error?: string;
  /** Additive: whether the branch is protected (undoing the rollback then takes force); older daemons leave it out. */
  protected?: boolean;
}

/** What `fork` reports in `result` (additive; older daemons send none). */
export interface ForkResult {
  /** The TTL every new branch got, canonical (`24h0m0s`), or null for none. */
  ttl: string | null;
  /** When the new branches may be reaped unless touched (RFC 3339), or null without a TTL. */
  expires_at: string | null;
}

/** What `checkout` reports in `result` beside the path (additive; older daemons send none). */
export interface CheckoutResult {
  /** The head txid the file holds (a session's durable txid for a live path). */
  txid: number;
  /** True when an existing file was kept rather than materialized again. */
  reused: boolean;
  /** True when the file holds writes no checkpoint has recorded yet (kept). */
  dirty: boolean;
  /** The undo point that kept the file's uncheckpointed writes when its branch moved under it. */
  kept?: string;
}

/** What a `check` op reports: the verb would go ahead now (a refusal is the verb's own error). */
export interface CheckResult {
  verb: CheckedVerb;
  allowed: true;
}

/** What `promote` reports in `result`. */
export interface PromoteResult {
  txid: number;
  /** The undo point that keeps the target's previous head (`<target>-pre-promote`). */
  backup: string;
  /**
   * Additive: where the earlier undo point of that name was kept (`<target>-pre-promote-<n>`), when it held the only
   * copy of its state; absent when it was replaced losing nothing, or there was none.
   */
  earlier_backup?: string;
  /** Additive: the request's `if_head`, echoed once checked (a daemon that does not know the field leaves it out). */
  if_head?: number;
  /** The target's checkout path. */
  checkout: string;
  /** False when the target's checkout could not be refreshed (`refresh_error` says why) or there was none. */
  refreshed: boolean;
  /** True when the source was under another holder's live lease: its last flushed head was promoted. */
  source_live: boolean;
  /** Why an existing checkout could not be refreshed (busy); also the last of `warnings`. */
  refresh_error?: string;
}

/** What a destroy discarded from the branch's checkout: writes no checkpoint had. */
export interface DiscardedWork {
  /** `uncheckpointed_writes`, or `unverified_checkout` for a checkout that could not be proven clean. */
  reason: 'uncheckpointed_writes' | 'unverified_checkout';
  /** The txid the checkout was materialized or last checkpointed at, when known. */
  since_txid?: number;
  /** When the checkout was last written (RFC 3339). */
  last_write: string;
  /** Bytes that were in its -wal. */
  wal_bytes: number;
}

/** A row both sides of a merge changed differently since their common state; null for the side that deleted it. */
export interface MergeConflict {
  table: string;
  /** Source change / target change. */
  kind: 'update/update' | 'update/delete' | 'delete/update' | 'insert/insert';
  key: DiffRow;
  /** The row as the common state had it (absent for insert/insert). */
  base?: DiffRow;
  source: DiffRow | null;
  target: DiffRow | null;
}

/**
 * A conflict of a merge resolved by the caller: the conflicting row's `table` and `key` exactly as the merge's
 * conflicts give them, and the full `row` to write there (column to value, encoded as the conflicts encode them: a
 * BLOB as `{"$blob": "<hex>"}`), or null to delete it.
 */
export interface ResolvedRow {
  table: string;
  key: DiffRow;
  row: DiffRow | null;
}

/** What `merge` reports in `result`. */
export interface MergeResult {
  db: string;
  source: string;
  target: string;
  /** The common state the changes were taken from: how it was found (`merge`, `fork`, `siblings`) and which. */
  base: { kind: 'merge' | 'fork' | 'siblings'; at: string };
  /** False when conflicts no `prefer` resolved stopped it (nothing changed), or there was nothing to merge. */
  applied: boolean;
  /** The side the conflicts `resolved` did not settle took, when `prefer` settled any. */
  prefer?: 'source' | 'target';
  /** How many conflicts the caller's resolved rows settled, when any did. */
  resolved?: number;
  /** The target's head txid after the merge. */
  txid: number;
  /** The checkpoint the merge made on the target. */
  checkpoint?: string;
  /** The undo point holding the target's previous head (`<target>-pre-merge`). */
  backup?: string;
  earlier_backup?: string;
  /** What the merge changed (or would change) per table. */
  tables: Array<{ table: string; inserted: number; updated: number; deleted: number }>;
  conflicts: MergeConflict[];
}

/** What `destroy` reports in `result`. */
export interface DestroyResult {
  removed_checkout: boolean;
  /** Additive: what the removed checkout held that no checkpoint had (gone with it); absent when nothing. */
  discarded?: DiscardedWork;
}

/** What `protect` and `unprotect` report. */
export interface ProtectResult {
  protected: boolean;
  /** False when the flag already had the requested value. */
  changed: boolean;
  /** Additive, on unprotect of a branch with a TTL: when it will now expire unless touched (RFC 3339). */
  expires_at?: string;
}

/** What `checkpoint` reports: the txid, and how it was written (`live`: a flush of the session open on the branch). */
export interface CheckpointReport {
  txid: number;
  /** `segment`/`snapshot`: written at rest; `none`: unchanged since the last checkpoint; `live`: a session flush. */
  kind: 'live' | 'segment' | 'snapshot' | 'none';
}

/** One record of a branch log: one change of the branch, who asked for it and through what. */
export interface LogRecord {
  db: string;
  branch: string;
  /** Its place in this incarnation's log, from 1. */
  seq: number;
  /** create, flush, checkpoint, fork, rollback, promote, compact, touch, protect, unprotect, destroy, reap, merge. */
  op: string;
  /** RFC 3339. */
  at: string;
  actor: 'human' | 'agent';
  /** `cli`, `daemon`, `mcp:<tool>`, `sdk:<adapter>/<framework>`, `janitor`, `library`. */
  surface: string;
  /** The lineage the change left the branch on (with txid_after, the state a moment resolves to). */
  lineage: string;
  txid_before: number;
  txid_after: number;
  /** The actor's tags (run id, agent name); `{}` when none. */
  meta: Record<string, string>;
  /** A checkpoint made or gone to, or a moment. */
  name?: string;
  /** A fork's or promote's source (`db@branch@txid`). */
  from?: string;
  /** A flush's or checkpoint's pages and bytes written. */
  pages?: number;
  bytes?: number;
  ttl?: string;
  undo?: string;
  [field: string]: unknown;
}

/** What `log` reports: the records, oldest first, of the branch (or of the last incarnation of a destroyed one). */
export interface LogReport {
  db: string;
  branch: string;
  log_id: string | null;
  /** False when the branch no longer exists: the records end with who destroyed it (`destroyed`). */
  live: boolean;
  /** True when the limit left older records out. */
  truncated: boolean;
  records: LogRecord[];
  destroyed?: LogRecord;
  /** Earlier incarnations of the name, destroyed: their log id, how many records, when the last was written. */
  earlier: Array<{ log_id: string; records: number; last_at: string }>;
}

/** What `query` reports: the rows of one read-only statement and where they were read. */
export interface QueryResult {
  /** `checkout`: the branch's checkout (unsaved writes show); `head`: its durable head; `checkpoint`: a checkpoint. */
  source: 'checkout' | 'head' | 'checkpoint';
  columns: string[];
  /** Values as JSON: BLOBs summarised, integers beyond 2^53 as strings. */
  rows: unknown[][];
  /** True when the limit cut the rows short. */
  truncated: boolean;
}

/**
 * A stored value in a diff: NULL, TEXT and safe integers and reals as themselves; a BLOB as lowercase hex, an integer
 * beyond 2^53 or a non-finite real as a decimal string.
 */
export type DiffValue = null | number | string | { $blob: string } | { $int: string } | { $real: string };

/** One row in a diff, by column. */
export type DiffRow = Record<string, DiffValue>;

/** One table's part of a diff. */
export interface TableDiff {
  table: string;
  /** The columns rows are matched on. */
  key: string[];
  status: 'same' | 'changed' | 'added' | 'removed';
  /** Row counts of each side (left out when counting would cost a scan of a large table). */
  left_count?: number;
  right_count?: number;
  added: DiffRow[];
  removed: DiffRow[];
  changed: Array<{ key: DiffRow; before: DiffRow; after: DiffRow }>;
  /** How many row changes of each kind, when a `limit` listed only the first of them. */
  counts?: { added: number; removed: number; changed: number };
}

/** A row-level diff of two durable states, left to right. */
export interface DiffReport {
  schema: Array<{
    type: 'table' | 'index' | 'view' | 'trigger';
    name: string;
    change: 'added' | 'removed' | 'changed';
    left?: string;
    right?: string;
  }>;
  tables: TableDiff[];
  stats: { tables_compared: number; rows_scanned: number; narrowed: boolean };
  /** True for a summary diff: statuses and counts, no rows. */
  summary_only: boolean;
}

/** A branch whose ref the daemon could not read (for example a malformed ref); the error names the fix. */
export interface UnreadableBranch {
  branch: string;
  code: string;
  error: string;
}

/** One response line. */
export interface WireResponse {
  ok: boolean;
  error?: string;
  code?: string;
  hint?: string;
  retryable?: boolean;
  checkout?: string;
  txid?: number;
  sessions?: SessionInfo[];
  branches?: WireBranchInfo[];
  databases?: string[];
  /** Additive, from `branches`: branches whose ref cannot be read, left out of `branches`. */
  unreadable?: UnreadableBranch[];
  /** Additive, from `branches` with a `limit`: whether matching branches were left out, and how many. */
  truncated?: boolean;
  more?: number;
  /** Additive result payloads (diff, gc, touch, protect, rollback, promote, destroy). */
  result?: unknown;
  /** Additive: what the caller must know about a successful op (writes kept in an undo branch, a stale checkout). */
  warnings?: string[];
  /** Additive, from a batch `fork`: the new branches, in the order named (all at `txid`). */
  forks?: string[];
  /** Additive, on a refusal of an agent (`actor: "agent"`): its human may lift it (by allowing it to force). */
  human_can_allow?: boolean;
  /** Additive: the hint in the terms of an agent behind `offshoot mcp`, where it differs from `hint`. */
  agent_hint?: string;
  /** Additive, from `checkout` with `live`: the path is a session's, whose writes are captured as they commit. */
  live?: boolean;
  /** Additive, from `fork` with `ephemeral`: the echo that the new branches are ephemeral. */
  ephemeral?: boolean;
  /** Additive, from `status`: every ephemeral branch the daemon holds, with or without a session; absent when none. */
  ephemeral_branches?: Array<{ db: string; branch: string }>;
}

/** The detail each event type carries. */
export interface EventDetails {
  session_opened: { holder: string; epoch: number };
  flushed: { kind: 'auto' | 'manual'; txid: number; duration_seconds: number };
  flush_failed: { kind: 'auto' | 'manual'; error: string; duration_seconds: number };
  fenced: { cause: string };
  session_closed: { error?: string };
  /** The session was evicted (`serve -max-open`); `stamped`: its checkout was proven clean, so reconnecting is O(1). */
  session_evicted: { stamped: boolean };
  /** An evicted session reconnected; `resumed`: without a rescan of its checkout. */
  session_reconnected: { resumed: boolean };
  /** The checkout left WAL mode (`journal_mode`) or has a rollback journal beside it; flushes now fail `UNSUPPORTED`. */
  contract_broken: { kind: 'journal_mode' | 'rollback_journal'; error: string };
  reaped: Record<string, never>;
  evicted: { checkpoint: string; bytes: number };
  dropped_slow_consumer: Record<string, never>;
}

/** The event types. */
export type EventType = keyof EventDetails;

/** Event types whose detail may be left out because every field in it is optional. */
type DetailOptional = 'session_closed' | 'reaped' | 'dropped_slow_consumer';

/**
 * One event, discriminated on `type` so `detail` is typed per event. `dropped_slow_consumer` is always the last event
 * of a stream: the daemon dropped this subscriber because it read too slowly.
 */
export type EventEnvelope = {
  [T in EventType]: {
    v: 1;
    /** RFC 3339, UTC. */
    ts: string;
    type: T;
    db?: string;
    branch?: string;
  } & (T extends DetailOptional ? { detail?: EventDetails[T] } : { detail: EventDetails[T] });
}[EventType];

/** The name the earlier client used for an event. */
export type OffshootEvent = EventEnvelope;
