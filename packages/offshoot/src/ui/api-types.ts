// The JSON the dashboard's HTTP API returns. The page imports these types only (erased at build), so the contract
// between server and page is written once; scripts get the same shapes (docs/ui.md).

import type { LogRecord } from '../core/log-record.js';

/** A value as the diff encodes it: see the diff JSON encoding in docs/ui.md. */
export type ApiValue = null | number | string | { $blob: string } | { $int: string } | { $real: string };

/** A row keyed by column name. */
export type ApiRow = Record<string, ApiValue>;

/** What serves the page: a store at rest, or a daemon with live sessions, events and metrics. */
export interface ApiServer {
  mode: 'at-rest' | 'daemon';
  /** True when GET /api/events also streams the daemon's events (it always streams `refs` change notices). */
  live: boolean;
  version: string;
  store: string;
}

/** GET /api/dbs */
export interface ApiDbs {
  server: ApiServer;
  dbs: Array<{ name: string; branches: number; sessions: number }>;
}

/** A named checkpoint of a branch. */
export interface ApiCheckpoint {
  name: string;
  txid: number;
  created_at?: string;
  meta?: Record<string, string>;
}

/** An open daemon session on a branch. */
export interface ApiSession {
  holder: string;
  epoch: number;
  durable_txid: number;
  capture_lag_bytes: number;
  last_flush_at?: string;
  durable_age?: string;
  flush_error?: string;
  error?: string;
}

/** One branch as a node of the tree. */
export interface ApiBranch {
  branch: string;
  /** error, pending, active, dirty, detached or idle. */
  state: string;
  storage: 'shared' | 'materialized';
  /**
   * In a tree: whether the branch reads objects another branch of the database reads too (drawn dashed). A shared
   * branch whose sources are all gone (destroyed, reaped, moved on) reads objects no other branch does: false.
   */
  reads_shared?: boolean;
  head_txid: number;
  protected: boolean;
  /** Held by the daemon serving the page until kept, gone with it (drawn dotted, badged `ephemeral`). */
  ephemeral?: true;
  checked_out: boolean;
  ttl?: string;
  /** Time left before it may be reaped, or `expired`. */
  remaining?: string;
  /** When a TTL'd branch may be reaped (RFC 3339), for a live countdown. */
  expires_at?: string;
  /** Expired but not reaped yet (no janitor has run since, or the reap is postponed). */
  expired: boolean;
  /** Expired, but the reap waits while the checkout holds this (uncheckpointed_writes, unverified_checkout). */
  reap_postponed?: string;
  /** Set on undo points: `pre-rollback`, `pre-promote` or `pre-merge`, and the branch they keep the old head of. */
  undo?: { kind: string; of: string };
  parent?: { branch: string; txid: number; db: string };
  checkpoints: ApiCheckpoint[];
  lease_holder?: string;
  lease_expiry?: string;
  touched_at?: string;
  meta?: Record<string, string>;
  session?: ApiSession;
}

/** An edge: `to` was made from `from` at `txid`. */
export interface ApiEdge {
  from: string;
  to: string;
  txid: number;
  kind: 'fork' | 'promote' | 'undo';
}

/** GET /api/dbs/:db/tree */
export interface ApiTree {
  server: ApiServer;
  db: string;
  now: string;
  branches: ApiBranch[];
  edges: ApiEdge[];
}

/** One LTX object of a chain. */
export interface ApiChainMember {
  key: string;
  lineage: string;
  kind: 'snapshot' | 'segment';
  min_txid: number;
  max_txid: number;
  bytes: number;
}

/** A CLI command the user might run next. */
export interface ApiCommand {
  label: string;
  command: string;
}

/** GET /api/dbs/:db/branches/:branch */
export interface ApiBranchDetail {
  server: ApiServer;
  db: string;
  branch: ApiBranch;
  ref: { lineage: string; epoch: number; head_epoch: number; base?: { lineage: string; txid: number } };
  chain: { members: ApiChainMember[]; bytes: number; lineages: string[] };
  /** Left out when asked with `?children=0`. */
  children?: ApiEdge[];
  commands: ApiCommand[];
  /** The branch's history, newest HISTORY_IN_PANEL records of its log (the whole log: GET …/log). */
  history: ApiLog;
}

/** The named fields of `T`, without its index signature (which would swallow them under `Omit`). */
type NamedFields<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/** One record of a branch log, as `offshoot log --json` prints it: the stored record with its db and branch, `meta` always present. */
export type ApiLogRecord = Omit<NamedFields<LogRecord>, 'meta'> & {
  db: string;
  branch: string;
  meta: NonNullable<LogRecord['meta']>;
};

/** GET /api/dbs/:db/branches/:branch/log (`?limit=N&since=T&actor=agent`), as `offshoot log --json` prints it. */
export interface ApiLog {
  db: string;
  branch: string;
  log_id: string | null;
  live: boolean;
  truncated: boolean;
  records: ApiLogRecord[];
  destroyed?: ApiLogRecord;
  earlier: Array<{ log_id: string; records: number; last_at: string }>;
}

/** GET /api/storage and GET /api/dbs/:db/storage */
export interface ApiStorage {
  server: ApiServer;
  db?: string;
  total_bytes: number;
  dbs: Array<{ db: string; branches: number; bytes: number }>;
  lineages: Array<{ lineage: string; dbs: string[]; objects: number; bytes: number; live_bytes: number }>;
  branches: Array<{ db: string; branch: string; pinned_objects: number; pinned_bytes: number; unique_bytes: number }>;
  reclaimable: { objects: number; bytes: number };
  /** The store's layout, what it allows and what `offshoot upgrade` would buy (as `status` shows it). */
  layout: { version: number; newest: number; allows: string; upgrade?: string };
}

/** One sample of the daemon's counters: how many happened in the interval ending at `ts`. */
export interface ApiSample {
  ts: string;
  flushes: number;
  forks: number;
  gc_passes: number;
  reaped: number;
}

/** GET /api/metrics/series (daemon only) */
export interface ApiSeries {
  interval_seconds: number;
  samples: ApiSample[];
}

/** One table of a diff, counted. */
export interface ApiDiffTable {
  table: string;
  key: string[];
  status: 'same' | 'changed' | 'added' | 'removed';
  left_count?: number;
  right_count?: number;
  added: number;
  removed: number;
  changed: number;
}

/** One changed row: `+` added, `-` removed, `~` changed (with before and after). */
export interface ApiDiffRow {
  op: '+' | '-' | '~';
  key: ApiRow;
  row?: ApiRow;
  before?: ApiRow;
  after?: ApiRow;
}

/** GET /api/diff?left=&right=[&table=&offset=&limit=] */
export interface ApiDiff {
  server: ApiServer;
  left: string;
  right: string;
  schema: Array<{ type: string; name: string; change: string; left?: string; right?: string }>;
  tables: ApiDiffTable[];
  /** One page of one table's row changes (the first changed table unless `table` names one). */
  page?: { table: string; offset: number; limit: number; total: number; rows: ApiDiffRow[] };
  /** Why the page's rows could not be sent (`TOO_LARGE`: they alone pass the cap), and how to narrow it. */
  page_error?: ApiError;
}

/** Rows of one table a merge writes (or keeps): inserted, updated, deleted. */
export interface ApiMergeTable {
  table: string;
  inserted: number;
  updated: number;
  deleted: number;
}

/** A row both sides changed differently since their common state; `null` for a side that deleted it. */
export interface ApiMergeConflict {
  table: string;
  kind: 'update/update' | 'update/delete' | 'delete/update' | 'insert/insert';
  key: ApiRow;
  base?: ApiRow;
  source: ApiRow | null;
  target: ApiRow | null;
}

/** GET /api/merge?db=&source=&into=[&at=]: a merge computed and not applied (`applied` is always false). */
export interface ApiMerge {
  server: ApiServer;
  db: string;
  source: string;
  target: string;
  /** The common state the changes are taken from: the last merge of the source, the fork point, or siblings'. */
  base: { kind: 'merge' | 'fork' | 'siblings'; at: string };
  applied: boolean;
  txid: number;
  /** The rows the merge would take from the source, per table (conflicting rows left out). */
  tables: ApiMergeTable[];
  /** The target's own row changes since the common state, per table: kept as they are. */
  kept: ApiMergeTable[];
  conflicts: ApiMergeConflict[];
}

/** An error body, as every other offshoot surface shapes it. */
export interface ApiError {
  ok: false;
  error: string;
  code?: string;
  hint?: string;
}

/** One frame of GET /api/events: the daemon's event envelope (docs/operations.md, Events). */
export interface ApiEvent {
  v: 1;
  ts: string;
  type: string;
  db?: string;
  branch?: string;
  detail?: Record<string, unknown>;
}
