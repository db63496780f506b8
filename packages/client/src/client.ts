import type { Socket } from 'node:net';
import { isAbsolute } from 'node:path';
import { normalizeBranch } from './branch-defaults.js';
import { Connection } from './connection.js';
import { dial, type ConnectOptions } from './dial.js';
import { OffshootError } from './errors.js';
import { subscribe } from './events.js';
import { type Episode, type EpisodeOptions, startEpisode } from './episode.js';
import {
  listField,
  requireCheckout,
  requireEphemeral,
  requireIfHeadChecked,
  requireResult,
  requireTxid,
} from './result-fields.js';
import { Session, type FlushOptions } from './session.js';
import type {
  BranchInfo,
  BranchState,
  CheckpointReport,
  DiffReport,
  EventEnvelope,
  LogReport,
  MergeResult,
  ProtectResult,
  QueryResult,
  ResolvedRow,
  SessionInfo,
  TouchResult,
  UnreadableBranch,
  WireOrigin,
  WireRequest,
  WireResponse,
} from './types.js';

/** The surface a client that names none says it is. */
const DEFAULT_SURFACE = 'sdk:typescript';

/**
 * Who asks for a call, for the daemon's safety rules: an AI agent's calls get the rules the MCP server applies
 * (protected branches and their undo points stay the human's). Absent means a human.
 */
export interface ActorOptions {
  /** `agent` when an AI agent asked for this call. */
  actor?: 'agent';
  /** With `actor: 'agent'`: the human allowed the agent to force past protection (never a live lease). */
  allowForce?: boolean;
  /** Who asks and through what, for this call's record in the branch log (else the connection's `origin`). */
  origin?: WireOrigin;
}

/** Options of `fork`. */
export interface ForkOptions extends ActorOptions {
  /** Fork from this checkpoint instead of the source head, or a moment: `tx:42`, `at:2026-12-07T10:00:00Z`. */
  from?: string;
  /** Reap the new branch after this long without a touch (a positive Go duration such as `30m` or `1h`). */
  ttl?: string;
  /** Metadata recorded on the new branch's `fork` checkpoint. */
  meta?: Record<string, string>;
  /**
   * Held by the daemon until kept (a named checkpoint or flush, a promote) and never written to the store before:
   * gone with the daemon, which no other daemon or CLI sees.
   */
  ephemeral?: boolean;
}

/** Options of the ops that take `force`. */
export interface ForceOptions extends ActorOptions {
  force?: boolean;
}

/** Options of `promote` (the earlier client's `PromoteOptions`, plus `ifHead`). */
export interface PromoteOptions extends ForceOptions {
  /**
   * Promote only while the target's head is this txid (the head a run forked from) and its checkout holds nothing
   * uncheckpointed: a compare-and-swap that otherwise fails `BASE_MOVED`, changing nothing.
   */
  ifHead?: number;
}

/** Options of `merge`. */
export interface MergeOptions extends ForceOptions {
  /** Merge this checkpoint of the source instead of its head, or a moment: `tx:42`, `at:2026-12-07T10:00:00Z`. */
  from?: string;
  /**
   * How rows both sides changed differently resolve: `source` takes the source's, `target` keeps the target's (the
   * rows `resolved` does not settle, when both are given).
   */
  prefer?: 'source' | 'target';
  /**
   * Your own rows for conflicts: each names a conflicting row by the `table` and `key` the merge's conflicts give,
   * and the full `row` to write there (null deletes it). Every conflict must be settled, by these or by `prefer`.
   */
  resolved?: ResolvedRow[];
  /** The name of the checkpoint the merge makes on the target (default `merge`, then `merge-2`, ...). */
  name?: string;
}

/** Options of `checkout`. */
export interface CheckoutOptions extends ActorOptions {
  /** Drop the checkout's uncheckpointed writes and re-materialize the head (kept otherwise). */
  discard?: boolean;
}

/** Options of `touch`. */
export interface TouchOptions extends ActorOptions {
  /** Omitted keeps the TTL, `none` clears it, a positive duration sets it. */
  ttl?: string;
}

/** Options of `checkpoint`. */
export interface CheckpointOptions extends ActorOptions {
  /** Metadata recorded on the checkpoint (test results, a git SHA, a run id). */
  meta?: Record<string, string>;
}

/** Options of `query`. */
export interface QueryOptions {
  /** Read this checkpoint instead of the head, or a moment: `tx:42`, `at:2026-12-07T10:00:00Z`. */
  at?: string;
  /** The most rows to return (the daemon's default when omitted). */
  limit?: number;
}

/** Options of `diff`. */
export interface DiffOptions {
  /** Per-table statuses and counts only, no rows. */
  summary?: boolean;
  /** Only this table (and the schema changes of it, its indexes and triggers). */
  table?: string;
  /** List at most this many row changes of each kind per table; `counts` then says how many there are. */
  limit?: number;
}

/** Options of `log`. */
export interface LogOptions {
  /** Only records at or after this time (a Date, or RFC 3339 text). */
  since?: Date | string;
  /** Only this actor's records. */
  actor?: 'human' | 'agent';
  /** The newest this many records (the daemon's default, 100, when omitted; 0 for all). */
  limit?: number;
}

/** Options of `events`. */
export interface EventsOptions {
  /** Called once the daemon has acknowledged the subscription. */
  onSubscribed?: () => void;
}

/** Options of `export`. */
export interface ExportOptions extends ForceOptions {
  /** Export this checkpoint instead of the head, or a moment: `tx:42`, `at:2026-12-07T10:00:00Z`. */
  checkpoint?: string;
}

/** A connection to the offshoot daemon with one typed method per op. Requests are answered one at a time, in order. */
export class Client {
  readonly #conn: Connection;
  readonly #socketPath: string | undefined;
  readonly #opts: ConnectOptions;

  /**
   * A client on an already connected socket; `connect` makes one. `socketPath`, the daemon's socket, is what
   * `events()` dials for its own connection (the earlier client's `new Client(socket, socketPath)`).
   */
  constructor(socket: Socket, socketPath?: string, opts: ConnectOptions = {}) {
    const actor =
      opts.actor === 'agent' ? { actor: opts.actor, ...(opts.allowForce ? { allow_force: true } : {}) } : {};
    this.#conn = new Connection(socket, opts.store, actor, opts.origin ?? { surface: DEFAULT_SURFACE });
    this.#socketPath = socketPath;
    this.#opts = opts;
  }

  /**
   * Sends one op as given (after the requests queued before it) and returns the daemon's whole response, for what
   * the typed methods leave out: the `result` of rollback, promote and destroy, `warnings`. A refusal throws as
   * from any method.
   */
  async request(req: WireRequest): Promise<WireResponse> {
    return this.#conn.request(req);
  }

  /** Creates an empty database whose protected `main` branch has the checkpoint `init`. */
  async create(db: string): Promise<void> {
    await this.#conn.request({ op: 'create', db });
  }

  /** Opens a live session: leases the branch, checks it out and captures every commit until the session closes. */
  async open(db: string, branch = 'main'): Promise<Session> {
    const res = await this.#conn.request({ op: 'open', db, branch });
    return new Session(this.#conn, db, branch, requireCheckout(res, 'open'), res.warnings ?? []);
  }

  /**
   * Returns the path of the branch's writable checkout (without a session), materializing the head unless the file is
   * current. Uncheckpointed writes in a current checkout are kept (the daemon says so in a warning); `discard` drops
   * them and re-materializes the head.
   */
  async checkout(db: string, branch = 'main', opts: CheckoutOptions = {}): Promise<string> {
    return requireCheckout(
      await this.#conn.request({
        op: 'checkout',
        db,
        branch,
        ...(opts.discard ? { discard: true } : {}),
        ...actorFields(opts),
      }),
      'checkout',
    );
  }

  /**
   * Forks `source` (its head, or `opts.from`) into the new branch `newBranch`; returns the fork's txid. Given a list
   * of names, forks them all at one fork point in one request, all or nothing: every name is checked before any fork
   * is written, and if one fails the forks already made are withdrawn and the error names the branch that failed.
   */
  async fork(
    db: string,
    source: string,
    newBranch: string | readonly string[],
    opts: ForkOptions = {},
  ): Promise<number> {
    const res = await this.#conn.request({
      op: 'fork',
      db,
      branch: source,
      ...(typeof newBranch === 'string' ? { name: newBranch } : { names: [...newBranch] }),
      from: opts.from,
      ttl: opts.ttl,
      meta: opts.meta,
      ...(opts.ephemeral ? { ephemeral: true } : {}),
      ...actorFields(opts),
    });
    if (opts.ephemeral) requireEphemeral(res, db, newBranch);
    return requireTxid(res, 'fork');
  }

  /**
   * Starts an episode: an ephemeral fork of `opts.source` (default `main`) at `opts.fromCheckpoint`, with a live
   * session on it. Write to `episode.path`; `await using` (or `close()`) ends it with the diff against where it
   * started and discards it, unless `episode.keep(name)` made it a durable branch.
   */
  episode(db: string, opts: EpisodeOptions = {}): Promise<Episode> {
    return startEpisode(this, db, opts);
  }

  /** Deletes a branch; `force` overrides protection (never a live lease: close that session first). */
  async destroy(db: string, branch: string, opts: ForceOptions = {}): Promise<void> {
    await this.#conn.request({ op: 'destroy', db, branch, force: opts.force, ...actorFields(opts) });
  }

  /** Repoints the branch to the checkpoint `to`, dropping later checkpoints; returns the refreshed checkout path. */
  async rollback(db: string, branch: string, to: string, opts: ActorOptions = {}): Promise<string> {
    return requireCheckout(
      await this.#conn.request({ op: 'rollback', db, branch, name: to, ...actorFields(opts) }),
      'rollback',
    );
  }

  /**
   * Replaces branch `onto` with a copy of `source`'s head (`force` if `onto` is protected); returns the new txid.
   * With `ifHead`, only while `onto` is still at that head (else `BASE_MOVED`, nothing changed).
   */
  async promote(db: string, source: string, onto: string, opts: PromoteOptions = {}): Promise<number> {
    const res = await this.#conn.request({
      op: 'promote',
      db,
      branch: source,
      name: onto,
      force: opts.force,
      ...(opts.ifHead !== undefined ? { if_head: opts.ifHead } : {}),
      ...actorFields(opts),
    });
    if (opts.ifHead !== undefined) requireIfHeadChecked(res, opts.ifHead);
    return requireTxid(res, 'promote');
  }

  /**
   * Merges the row changes `source` (its head, or `opts.from`) made since its common state with `into` into `into`,
   * three-way: a result with `applied: false` and the `conflicts` listed (nothing changed) when rows conflict and
   * neither `resolved` nor `prefer` resolves them. Onto a protected target it takes `force`. Throws `MERGE_CONFLICT`
   * when both sides changed the schema, or `resolved` leaves some conflicts unsettled with no `prefer`.
   */
  async merge(db: string, source: string, into: string, opts: MergeOptions = {}): Promise<MergeResult> {
    return requireResult<MergeResult>(
      await this.#conn.request({
        op: 'merge',
        db,
        branch: source,
        into,
        force: opts.force,
        ...(opts.from !== undefined ? { from: opts.from } : {}),
        ...(opts.prefer !== undefined ? { prefer: opts.prefer } : {}),
        ...(opts.resolved !== undefined ? { resolved: opts.resolved } : {}),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...actorFields(opts),
      }),
      'merge',
    );
  }

  /** Makes a shared branch self-contained; returns its head txid. */
  async compact(db: string, branch: string): Promise<number> {
    return requireTxid(await this.#conn.request({ op: 'compact', db, branch }), 'compact');
  }

  /** Restarts the branch's TTL clock, optionally changing the TTL. */
  async touch(db: string, branch: string, opts: TouchOptions = {}): Promise<TouchResult> {
    return requireResult<TouchResult>(
      await this.#conn.request({ op: 'touch', db, branch, ttl: opts.ttl, ...actorFields(opts) }),
      'touch',
    );
  }

  /**
   * Records the branch's current state as the checkpoint `name`: a flush of the session open on it in this daemon,
   * else an at-rest checkpoint of its checkout (what changed since it was materialized or last checkpointed).
   */
  async checkpoint(db: string, branch: string, name: string, opts: CheckpointOptions = {}): Promise<CheckpointReport> {
    const res = await this.#conn.request({ op: 'checkpoint', db, branch, name, meta: opts.meta, ...actorFields(opts) });
    const { kind } = requireResult<{ kind: CheckpointReport['kind'] }>(res, 'checkpoint');
    return { txid: requireTxid(res, 'checkpoint'), kind };
  }

  /**
   * Runs one read-only SQL statement against a branch (its checkout when it has one, so unsaved writes show, else its
   * durable head) or one of its checkpoints (`at`); writes, ATTACH and PRAGMA assignments are refused.
   */
  async query(db: string, branch: string, sql: string, opts: QueryOptions = {}): Promise<QueryResult> {
    const res = await this.#conn.request({ op: 'query', db, branch, name: opts.at, sql, limit: opts.limit });
    return requireResult<QueryResult>(res, 'query');
  }

  /**
   * The row-level diff of two durable states (checkpointed or flushed, not unsaved checkout writes), each named
   * `db[@branch[@checkpoint]]`; read without a lease.
   */
  async diff(left: string, right: string, opts: DiffOptions = {}): Promise<DiffReport> {
    const l = splitTarget(left);
    const res = await this.#conn.request({
      op: 'diff',
      ...l,
      to: right,
      summary: opts.summary,
      table: opts.table,
      limit: opts.limit,
    });
    return requireResult<DiffReport>(res, 'diff');
  }

  /**
   * Lists the branches of a database with their state and storage class. Fields an older daemon leaves out read as
   * the earlier client's defaults (`""`, `0`, `false`, `[]`), so `state` is `""` from a daemon that sends none.
   */
  async branches(db: string): Promise<BranchInfo[]> {
    return listField(await this.#conn.request({ op: 'branches', db }), 'branches', 'branches').map(normalizeBranch);
  }

  /**
   * Like `branches`, plus the branches whose ref the daemon could not read (left out of `branches`). `state` keeps
   * only branches in one of those states; `limit` lists at most that many, and `truncated`/`more` say what it left
   * out (an older daemon ignores both filters and lists everything).
   */
  async branchReport(
    db: string,
    opts: { state?: BranchState[]; limit?: number } = {},
  ): Promise<{ branches: BranchInfo[]; unreadable: UnreadableBranch[]; truncated?: boolean; more?: number }> {
    const res = await this.#conn.request({ op: 'branches', db, ...opts });
    return {
      branches: listField(res, 'branches', 'branches').map(normalizeBranch),
      unreadable: res.unreadable ?? [],
      ...(res.truncated === undefined ? {} : { truncated: res.truncated, more: res.more ?? 0 }),
    };
  }

  /**
   * The history of a branch, oldest first: every change, who asked for it (`actor`) and through what (`surface`). A
   * destroyed branch's last log, ending with who destroyed it, while GC keeps it.
   */
  async log(db: string, branch = 'main', opts: LogOptions = {}): Promise<LogReport> {
    const since = opts.since instanceof Date ? opts.since.toISOString() : opts.since;
    const res = await this.#conn.request({
      op: 'log',
      db,
      branch,
      ...(since !== undefined ? { since } : {}),
      ...(opts.actor !== undefined ? { by: opts.actor } : {}),
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    });
    return requireResult<LogReport>(res, 'log');
  }

  /** Lists the databases, sorted. */
  async dbs(): Promise<string[]> {
    return listField(await this.#conn.request({ op: 'dbs' }), 'databases', 'dbs');
  }

  /**
   * Writes the durable state of a branch (its head, or `opts.checkpoint`) to `out` on the daemon host. `out` must be
   * absolute: the daemon may run in another directory, so a relative path is refused here. Returns the exported txid.
   */
  async export(db: string, branch: string, out: string, opts: ExportOptions = {}): Promise<number> {
    if (!isAbsolute(out)) {
      throw new OffshootError('INVALID_ARGUMENT', `export: output path ${JSON.stringify(out)} is not absolute`, {
        hint: 'pass an absolute path, e.g. path.resolve(out)',
      });
    }
    const res = await this.#conn.request({
      op: 'export',
      db,
      branch,
      name: opts.checkpoint,
      path: out,
      force: opts.force,
    });
    return requireTxid(res, 'export');
  }

  /** Materializes a named checkpoint as a read-only file (cached; `force` rebuilds it) and returns its path. */
  async checkoutAt(db: string, branch: string, checkpoint: string, opts: ForceOptions = {}): Promise<string> {
    return requireCheckout(
      await this.#conn.request({ op: 'checkout-at', db, branch, name: checkpoint, force: opts.force }),
      'checkout-at',
    );
  }

  /**
   * Flushes the session open on db@branch (in this daemon, from any client), optionally as a named checkpoint with
   * metadata; returns the durable txid. `Session.flush` does the same for a session this client opened.
   */
  async flush(db: string, branch: string, name?: string, opts: FlushOptions = {}): Promise<number> {
    return requireTxid(await this.#conn.request({ op: 'flush', db, branch, name, meta: opts.meta }), 'flush');
  }

  /** Closes the session open on db@branch (flushing what is pending), from any client. */
  async closeSession(db: string, branch: string): Promise<void> {
    await this.#conn.request({ op: 'close', db, branch });
  }

  /** Lists the sessions open in the daemon. */
  async status(): Promise<SessionInfo[]> {
    return listField(await this.#conn.request({ op: 'status' }), 'sessions', 'status');
  }

  /** Marks a branch protected: destroying it or promoting onto it then needs `force`. */
  async protect(db: string, branch: string): Promise<ProtectResult> {
    return requireResult<ProtectResult>(await this.#conn.request({ op: 'protect', db, branch }), 'protect');
  }

  /** Clears a branch's protected flag. */
  async unprotect(db: string, branch: string): Promise<ProtectResult> {
    return requireResult<ProtectResult>(await this.#conn.request({ op: 'unprotect', db, branch }), 'unprotect');
  }

  /** Asks the daemon to shut down; it answers first, then closes its sessions and exits. */
  async shutdown(): Promise<void> {
    await this.#conn.request({ op: 'shutdown' });
  }

  /**
   * Streams daemon events on a connection of its own, starting with those published after the subscription. The
   * stream ends after `dropped_slow_consumer` (this reader fell too far behind) or when the daemon goes away;
   * leaving the loop early closes the connection. `onSubscribed` runs once the daemon has acknowledged the
   * subscription (while the loop reads): every event published after that is delivered.
   */
  events(opts: EventsOptions = {}): AsyncGenerator<EventEnvelope, void, undefined> {
    if (this.#socketPath === undefined) {
      throw new OffshootError('USAGE', 'events() needs the daemon socket path, and this client was made without one', {
        hint: 'make the client with connect(socketPath), or new Client(socket, socketPath)',
      });
    }
    return subscribe(this.#socketPath, this.#opts, opts.onSubscribed);
  }

  /**
   * Who asks, sent with every request that names no origin of its own, for the branch log (`ConnectOptions.origin`):
   * settable, so a connection kept for many callers (an MCP server's) says whose call each one is.
   */
  get origin(): WireOrigin | undefined {
    return this.#conn.origin;
  }

  set origin(origin: WireOrigin | undefined) {
    this.#conn.origin = origin;
  }

  /** The daemon's socket this client was connected to, when it was made with one (`connect` always is). */
  get socketPath(): string | undefined {
    return this.#socketPath;
  }

  /** True once the connection has closed (either side) or failed: a caller keeping a client can tell it must redial. */
  get closed(): boolean {
    return this.#conn.closed;
  }

  /**
   * Closes the connection; requests still waiting fail with CONNECTION_CLOSED. Sessions stay open in the daemon.
   * It closes at once; the promise is there for code written as `await client.close()`.
   */
  close(): Promise<void> {
    this.#conn.close();
    return Promise.resolve();
  }
}

/** The wire fields of `opts`: left out for a human's call, so older daemons see the request they always saw. */
function actorFields(opts: ActorOptions): { actor?: 'agent'; allow_force?: boolean; origin?: WireOrigin } {
  return {
    ...(opts.actor === undefined ? {} : { actor: opts.actor, allow_force: opts.allowForce }),
    ...(opts.origin === undefined ? {} : { origin: opts.origin }),
  };
}

/** `db[@branch[@checkpoint]]` as the request's db, branch and name (the left side of a diff). */
function splitTarget(target: string): { db: string; branch?: string; name?: string } {
  const [db = '', branch, name] = target.split('@');
  return { db, ...(branch === undefined ? {} : { branch }), ...(name === undefined ? {} : { name }) };
}

/** Connects to the daemon listening on `socketPath`. */
export async function connect(socketPath: string, opts: ConnectOptions = {}): Promise<Client> {
  return new Client(await dial(socketPath, opts), socketPath, opts);
}
