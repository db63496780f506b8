import type { DiffOptions, QueryOptions } from './client.js';
import type {
  CheckoutResult,
  CheckpointReport,
  DestroyResult,
  DiffReport,
  MergeResult,
  PromoteResult,
  QueryResult,
  ResolvedRow,
  RollbackResult,
} from './types.js';

/** A fork as asked for: `source` (its head, or its checkpoint `at`) into `branch` and, at the same point, `more`. */
export interface ForkRequest {
  db: string;
  source: string;
  branch: string;
  /** More new branches forked at the same fork point, all or nothing. */
  more?: readonly string[] | undefined;
  at?: string | undefined;
  /** A positive duration; omitted for no TTL. */
  ttl?: string | undefined;
  meta?: Record<string, string> | undefined;
  /** Ephemeral forks: held by the daemon until kept, gone with it (a place without a daemon refuses them). */
  ephemeral?: boolean | undefined;
}

/** What a fork made: every new branch in the order named, at one txid, with the TTL applied and the expiry. */
export interface ForkReport {
  txid: number;
  branches: string[];
  /** The TTL applied, canonical (`24h0m0s`), or null for none. */
  ttl: string | null;
  /** When the forks may be reaped unless touched (RFC 3339); null without a TTL, or from an older daemon. */
  expires_at: string | null;
  /** The forks are ephemeral (asked for, and echoed by the daemon). */
  ephemeral?: true;
}

/**
 * A branch's writable file, whether a daemon session captures writes to it as they commit, and (where offshoot
 * reports it: at rest, and from a current daemon) what the file holds.
 */
export interface CheckoutReport extends Partial<CheckoutResult> {
  path: string;
  live: boolean;
}

/** What a rollback did, with the branch's checkout path and what the op warned of. */
export interface RollbackReport extends RollbackResult {
  checkout: string;
  warnings: string[];
}

/** What a promote did, and what the op warned of. */
export interface PromoteReport extends PromoteResult {
  warnings: string[];
}

/** What a merge did (or, `applied` false, the conflicts that held it), and what the op warned of. */
export interface MergeReport extends MergeResult {
  warnings: string[];
}

/** Options of a place's merge: the source's point, how conflicting rows resolve, the checkpoint's name, force into a protected target. */
export interface PlaceMergeOptions {
  /** The source's checkpoint or moment (`tx:42`) to merge instead of its head. */
  at?: string | undefined;
  prefer?: 'source' | 'target' | undefined;
  /** The caller's own rows for conflicts (see ResolvedRow). */
  resolved?: ResolvedRow[] | undefined;
  name?: string | undefined;
  force?: boolean | undefined;
}

/** What a destroy did, and what the op warned of. */
export interface DestroyReport extends DestroyResult {
  warnings: string[];
}

/** Options of a place's promote: force onto a protected target, and the head txid the target must still be at. */
export interface PlacePromoteOptions {
  force?: boolean | undefined;
  ifHead?: number | undefined;
}

/** A call whose refusals `check` runs, without making it: the verb and its arguments. */
export type CheckRequest =
  | { verb: 'rollback'; db: string; branch: string; to: string }
  | { verb: 'promote'; db: string; source: string; onto: string; force: boolean; ifHead?: number | undefined }
  | { verb: 'merge'; db: string; source: string; into: string; force: boolean; at?: string | undefined }
  | { verb: 'destroy'; db: string; branch: string; force: boolean };

/** Options of a fork from a link: the TTL, the checkpoint to fork from instead of the head, and meta. */
export interface LinkForkOptions {
  ttl?: string | undefined;
  from?: string | undefined;
  meta?: Record<string, string> | undefined;
}

/**
 * One branch an adapter works on, through a daemon session (`SessionLink`) or at rest (`AtRestLink`): its
 * writable checkout `path` and the verbs on it, each one call of the daemon client or one run of the CLI. The SQLite
 * connections on `path` are the adapter's own. The TypeScript twin of the Python SDK's `BranchLink`.
 */
export interface BranchLink {
  readonly mode: 'session' | 'at-rest';
  readonly db: string;
  readonly branch: string;
  /** The writable checkout; it can move after `rollback`. */
  readonly path: string;
  /** Makes the checkout durable, as the checkpoint `name` when it is not empty; returns the txid. */
  flush(name: string, meta: Record<string, string> | undefined): Promise<number>;
  /** Forks this branch (a head fork holds everything committed so far) and links to the new branch the same way. */
  fork(newBranch: string, opts: LinkForkOptions): Promise<BranchLink>;
  /** Repoints this branch at checkpoint `to`; the link is usable afterwards even when this rejects. */
  rollback(to: string): Promise<void>;
  /**
   * Repoints `onto` at this branch's head (committed writes included); returns the txid. With `ifHead`, only while
   * `onto` is still at that head txid (else `BASE_MOVED`, nothing changed).
   */
  promote(onto: string, force: boolean, ifHead?: number): Promise<number>;
  /**
   * Merges this branch's row changes since its common state with `into` into `into`, three-way (committed writes
   * included): `applied` false, the `conflicts` listed and nothing changed, when rows conflict and no `prefer`
   * resolves them.
   */
  merge(into: string, force: boolean, prefer?: 'source' | 'target'): Promise<MergeResult>;
  /** The row-level diff from the durable state `base` (`db[@branch[@checkpoint]]`) to this branch's durable head. */
  diff(base: string): Promise<DiffReport>;
  /** Deletes the branch; the link is closed afterwards even when this rejects. */
  destroy(force: boolean): Promise<void>;
  /** Releases what the link holds (its session, its connection); the branch stays. */
  close(): Promise<void>;
}

/**
 * offshoot's branch verbs on any branch of one store, for one caller: through a daemon (`DaemonPlace`, one request
 * each) or at rest (`StorePlace`, one run of the `offshoot` CLI each). Who asks is the place's: an agent's calls get
 * the agent rules, decided by offshoot; nothing here decides what is allowed. Links to one branch come from here.
 */
export interface BranchPlace {
  readonly mode: 'daemon' | 'at-rest';
  /** Creates an empty database (its protected `main` with the checkpoint `init`). */
  create(db: string): Promise<void>;
  /** Links to `db@branch` (a daemon session, or the at-rest checkout), creating `db` first when asked and missing. */
  open(db: string, branch: string, opts: { create: boolean }): Promise<BranchLink>;
  fork(req: ForkRequest): Promise<ForkReport>;
  /** The branch's writable file: a session's live path where the daemon has one open on it, else a checkout. */
  checkout(db: string, branch: string): Promise<CheckoutReport>;
  checkpoint(db: string, branch: string, name: string, meta?: Record<string, string>): Promise<CheckpointReport>;
  diff(left: string, right: string, opts?: DiffOptions): Promise<DiffReport>;
  query(db: string, branch: string, sql: string, opts?: QueryOptions): Promise<QueryResult>;
  rollback(db: string, branch: string, to: string): Promise<RollbackReport>;
  /** With `ifHead`, a compare-and-swap: only while `onto` is still at that head txid (else `BASE_MOVED`). */
  promote(db: string, source: string, onto: string, opts?: PlacePromoteOptions): Promise<PromoteReport>;
  /** Merges `source`'s row changes since its common state with `into` into `into`, three-way. */
  merge(db: string, source: string, into: string, opts?: PlaceMergeOptions): Promise<MergeReport>;
  destroy(db: string, branch: string, opts?: { force?: boolean }): Promise<DestroyReport>;
  /**
   * Runs every refusal the call would meet now, and changes nothing: resolves when it would go ahead, rejects with
   * the refusal it would get (`humanCanAllow` on one the caller's human may lift). One request, or one CLI run.
   */
  check(req: CheckRequest): Promise<void>;
}
