import { type Client, OffshootError, type Session, sanitizeName } from '@offshoot/client';

/** A LangGraph thread id (or any id a thread is known by). */
export type ThreadId = string | number;

/**
 * Forks the application database per LangGraph thread, leaving LangGraph's own checkpointer alone: thread `tid`
 * maps to branch `prefix + sanitizeName(tid)`, forked from `baseBranch` with `ttl` on first use, and its checkpoints
 * are named after LangGraph's checkpoint ids so a rewound thread can fork the database at the same point. The
 * database must already exist. `ttl = null` forks without a TTL.
 */
export class ThreadForks {
  readonly #client: Client;
  readonly #db: string;
  readonly #baseBranch: string;
  readonly #ttl: string | null;
  readonly #prefix: string;
  readonly #sessions = new Map<string, Promise<Session>>();

  constructor(client: Client, db: string, baseBranch = 'main', ttl: string | null = '24h', prefix = 'thread-') {
    this.#client = client;
    this.#db = db;
    this.#baseBranch = baseBranch;
    this.#ttl = ttl;
    this.#prefix = prefix;
  }

  /** The branch that holds thread `tid`'s database (deterministic; the same in the Python SDK). */
  branchFor(tid: ThreadId): string {
    return this.#prefix + sanitizeName(tid);
  }

  /** The writable database path of thread `tid`, forking its branch on first use and opening a session on it. */
  async path(tid: ThreadId): Promise<string> {
    return (await this.#session(tid)).path;
  }

  /** Flushes thread `tid`'s database as the checkpoint named after LangGraph's `checkpointId`; returns the txid. */
  async checkpoint(tid: ThreadId, checkpointId: string): Promise<number> {
    return (await this.#session(tid)).flush(sanitizeName(checkpointId));
  }

  /**
   * Forks `newThread`'s database from `fromThread`'s at the checkpoint recorded for `atCheckpoint`, and returns the
   * new thread's path. Unknown source threads, an existing target and unrecorded checkpoints are clear errors.
   */
  async forkThread(fromThread: ThreadId, atCheckpoint: string, newThread: ThreadId): Promise<string> {
    const fromBranch = this.branchFor(fromThread);
    const newBranch = this.branchFor(newThread);
    const branches = await this.#branchNames();
    if (!branches.has(fromBranch)) {
      throw new OffshootError('NOT_FOUND', `forkThread: unknown thread ${JSON.stringify(String(fromThread))}`, {
        hint: `no branch ${fromBranch} on ${this.#db}; call path(${JSON.stringify(String(fromThread))}) first`,
      });
    }
    if (branches.has(newBranch)) {
      throw new OffshootError('ALREADY_EXISTS', `forkThread: thread ${JSON.stringify(String(newThread))} exists`, {
        hint: `branch ${newBranch} is already on ${this.#db}; fork into a new thread id`,
      });
    }
    const checkpoint = sanitizeName(atCheckpoint);
    const recorded = (await this.#client.branches(this.#db))
      .find((b) => b.branch === fromBranch)
      ?.checkpoints.includes(checkpoint);
    if (recorded !== true) {
      throw new OffshootError(
        'NOT_FOUND',
        `forkThread: checkpoint ${JSON.stringify(atCheckpoint)} was never recorded on thread ${JSON.stringify(String(fromThread))}`,
        { hint: `call checkpoint(${JSON.stringify(String(fromThread))}, ${JSON.stringify(atCheckpoint)}) first` },
      );
    }
    await this.#client.fork(this.#db, fromBranch, newBranch, {
      from: checkpoint,
      ...(this.#ttl === null ? {} : { ttl: this.#ttl }),
    });
    return this.path(newThread);
  }

  /** Closes thread `tid`'s session, or every session this object opened when `tid` is omitted. */
  async close(tid?: ThreadId): Promise<void> {
    const keys = tid === undefined ? [...this.#sessions.keys()] : [String(tid)];
    for (const key of keys) {
      const session = this.#sessions.get(key);
      this.#sessions.delete(key);
      if (session !== undefined) await (await session).close();
    }
  }

  async #branchNames(): Promise<Set<string>> {
    return new Set((await this.#client.branches(this.#db)).map((b) => b.branch));
  }

  #session(tid: ThreadId): Promise<Session> {
    const key = String(tid);
    let session = this.#sessions.get(key);
    if (session === undefined) {
      session = this.#open(tid);
      this.#sessions.set(key, session);
      session.catch(() => this.#sessions.delete(key));
    }
    return session;
  }

  async #open(tid: ThreadId): Promise<Session> {
    const branch = this.branchFor(tid);
    if (!(await this.#branchNames()).has(branch)) {
      await this.#client.fork(this.#db, this.#baseBranch, branch, this.#ttl === null ? {} : { ttl: this.#ttl });
    }
    return this.#client.open(this.#db, branch);
  }
}
