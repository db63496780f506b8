import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { type BranchLink, type MergeResult, OffshootError, SessionLink, StorePlace } from '@offshoot/client';

/** What the branch log says the saver's calls come through. */
export const SURFACE = 'sdk:langgraph/langgraph-js';

/** Options of `OffshootSaver.session`. */
export interface SessionSaverOptions {
  /** Create the database first when the store lacks it; default true. */
  create?: boolean;
}

/** Options of `OffshootSaver.atRest`. */
export interface AtRestSaverOptions {
  /** Create the database first when the store lacks it; default true. */
  create?: boolean;
  /** The offshoot executable; default OFFSHOOT_BIN, else `offshoot` on PATH. */
  bin?: string;
}

/** Options of `forkThread`. */
export interface ForkThreadOptions {
  /** Reap the fork after this long without activity (a positive Go duration such as `1h`). */
  ttl?: string;
  /** Fork at this named checkpoint instead of the head (then nothing is flushed first). */
  fromCheckpoint?: string;
  /** Metadata recorded on the new branch. */
  meta?: Record<string, string>;
}

/** Options of `promote` and `destroy`. */
export interface SaverForceOptions {
  force?: boolean;
}

/** Options of `merge`: how rows both sides changed differently resolve, and force into a protected target. */
export interface SaverMergeOptions extends SaverForceOptions {
  /** `source` takes this branch's rows, `target` keeps the target's; absent, conflicts hold the merge. */
  prefer?: 'source' | 'target';
}

type DeltaHistoryOptions = Parameters<BaseCheckpointSaver['getDeltaChannelHistory']>[0];
type DeltaHistory = Awaited<ReturnType<BaseCheckpointSaver['getDeltaChannelHistory']>>;

/**
 * A LangGraph checkpointer whose SQLite file is an offshoot branch. It does no checkpoint I/O of its own: every
 * checkpointer method delegates to the stock `SqliteSaver` on the branch's checkout. The branch verbs
 * (`checkpoint`, `forkThread`, `rollback`, `promote`, `merge`, `destroy`) each map to one offshoot op.
 */
export class OffshootSaver extends BaseCheckpointSaver {
  #link: BranchLink;
  #inner: SqliteSaver;
  #closed = false;

  private constructor(link: BranchLink) {
    const inner = SqliteSaver.fromConnString(link.path);
    super(inner.serde);
    this.#link = link;
    this.#inner = inner;
  }

  /**
   * A saver on a live daemon session on `db@branch` (the daemon at `socket` leases the branch and captures every
   * write); `create` (default true) creates `db` first when the store lacks it. The branch must exist.
   */
  static async session(
    socket: string,
    db: string,
    branch = 'main',
    { create = true }: SessionSaverOptions = {},
  ): Promise<OffshootSaver> {
    return OffshootSaver.#wrap(await SessionLink.open(socket, db, branch, { create, origin: { surface: SURFACE } }));
  }

  /**
   * A saver on the at-rest checkout of `db@branch` in `store`, driving the `offshoot` CLI (OFFSHOOT_BIN, else PATH)
   * with no daemon; `create` (default true) creates `db` first when the store lacks it.
   */
  static async atRest(
    store: string,
    db: string,
    branch = 'main',
    { create = true, bin }: AtRestSaverOptions = {},
  ): Promise<OffshootSaver> {
    const cli = bin === undefined ? { store } : { store, bin };
    return OffshootSaver.#wrap(
      await new StorePlace(cli, { origin: { surface: SURFACE } }).open(db, branch, { create }),
    );
  }

  static async #wrap(link: BranchLink): Promise<OffshootSaver> {
    try {
      return new OffshootSaver(link);
    } catch (err) {
      await link.close();
      throw err;
    }
  }

  /** The offshoot database of this saver's branch. */
  get db(): string {
    return this.#link.db;
  }

  /** The offshoot branch this saver writes to. */
  get branch(): string {
    return this.#link.branch;
  }

  /** The writable SQLite checkout the inner `SqliteSaver` uses. */
  get path(): string {
    return this.#link.path;
  }

  /** `session` (a daemon session) or `at-rest` (the CLI). */
  get mode(): 'session' | 'at-rest' {
    return this.#link.mode;
  }

  /** True once `close` or `destroy` ran. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Makes the thread state durable, optionally as a named checkpoint that `rollback` and
   * `forkThread({ fromCheckpoint })` can target; returns the txid. At rest a checkpoint needs a name.
   */
  async checkpoint(name = '', meta?: Record<string, string>): Promise<number> {
    this.#checkOpen('checkpoint');
    if (typeof name !== 'string') throw badArgument('checkpoint name must be a string');
    if (meta !== undefined && name === '') throw badArgument('checkpoint meta needs a checkpoint name');
    if (name === '' && this.#link.mode === 'at-rest') {
      throw new OffshootError('USAGE', 'an at-rest checkpoint needs a name', {
        hint: 'pass a name: saver.checkpoint("after-step-3")',
      });
    }
    return this.#link.flush(name, meta);
  }

  /**
   * Forks this branch into `newBranch` and returns a new, independent saver on it (its own connection and
   * session). Without `fromCheckpoint` the fork holds everything written so far (flushed first); with it, exactly
   * that checkpoint's state. A `ttl` makes the fork reap itself when nobody promotes it.
   */
  async forkThread(newBranch: string, opts: ForkThreadOptions = {}): Promise<OffshootSaver> {
    this.#checkOpen('forkThread');
    if (typeof newBranch !== 'string' || newBranch === '') throw badArgument('forkThread needs a new branch name');
    return OffshootSaver.#wrap(
      await this.#link.fork(newBranch, { ttl: opts.ttl, from: opts.fromCheckpoint, meta: opts.meta }),
    );
  }

  /**
   * Repoints this branch at the checkpoint `to`, discarding everything after it (unflushed writes included). The
   * inner `SqliteSaver` is replaced in place, so a graph compiled against this saver stays valid; on failure the
   * saver is reopened on the unchanged branch.
   */
  async rollback(to: string): Promise<void> {
    this.#checkOpen('rollback');
    if (typeof to !== 'string' || to === '') throw badArgument('rollback needs a checkpoint name');
    this.#inner.db.close();
    try {
      await this.#link.rollback(to);
    } finally {
      this.#inner = SqliteSaver.fromConnString(this.#link.path);
      this.serde = this.#inner.serde;
    }
  }

  /**
   * Makes this branch durable, then repoints `onto` at its head; returns the txid. A protected `onto` (main is)
   * needs `force`; a session open on `onto` must be closed first. This saver keeps writing to its own branch.
   */
  async promote(onto: string, { force = false }: SaverForceOptions = {}): Promise<number> {
    this.#checkOpen('promote');
    if (typeof onto !== 'string' || onto === '') throw badArgument('promote needs a target branch');
    return this.#link.promote(onto, force);
  }

  /**
   * Merges this branch's row changes (every write so far: the branch is made durable first) since its common state
   * with `into` into `into`, three-way, whatever else `into` took since. Rows both changed differently hold the
   * merge (`applied` false, the `conflicts` listed, nothing changed) unless `prefer` picks a side. A protected
   * `into` (main is) needs `force`; a session open on `into` must be closed first. This saver keeps writing to its
   * own branch.
   */
  async merge(into: string, { prefer, force = false }: SaverMergeOptions = {}): Promise<MergeResult> {
    this.#checkOpen('merge');
    if (typeof into !== 'string' || into === '') throw badArgument('merge needs a target branch');
    return this.#link.merge(into, force, prefer);
  }

  /**
   * Closes this saver and deletes its branch. A protected branch needs `force`; the saver is closed either way,
   * and destroying a closed saver does nothing.
   */
  async destroy({ force = false }: SaverForceOptions = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#inner.db.close();
    await this.#link.destroy(force);
  }

  /** Releases the SQLite handle, the session (lease) and the connection; the branch keeps its durable state. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#inner.db.close();
    } finally {
      await this.#link.close();
    }
  }

  /** `await using saver = await OffshootSaver.session(…)` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #checkOpen(what: string): void {
    if (this.#closed) {
      throw new OffshootError('USAGE', `${what}: the OffshootSaver on ${this.db}@${this.branch} is closed`, {
        hint: 'open a new saver with OffshootSaver.session() or OffshootSaver.atRest()',
      });
    }
  }

  // Checkpointer methods: pure delegation to the inner SqliteSaver.

  override toJSON(): string {
    return `[OffshootSaver ${this.db}@${this.branch}]`;
  }

  override get(config: RunnableConfig): Promise<Checkpoint | undefined> {
    return this.#inner.get(config);
  }

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.#inner.getTuple(config);
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    yield* this.#inner.list(config, options);
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const inner: BaseCheckpointSaver = this.#inner;
    return inner.put(config, checkpoint, metadata, newVersions);
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const inner: BaseCheckpointSaver = this.#inner;
    return inner.putWrites(config, writes, taskId, taskPath);
  }

  override deleteThread(threadId: string): Promise<void> {
    return this.#inner.deleteThread(threadId);
  }

  override getDeltaChannelHistory(options: DeltaHistoryOptions): Promise<DeltaHistory> {
    return this.#inner.getDeltaChannelHistory(options);
  }

  override getNextVersion(current: number | undefined): number {
    return this.#inner.getNextVersion(current);
  }
}

function badArgument(message: string): OffshootError {
  return new OffshootError('INVALID_ARGUMENT', message, { hint: 'see docs/typescript.md for the saver API' });
}
