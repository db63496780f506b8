import { type Client, connect, isOffshootError, type Session } from '@offshoot/client';
import type { BackendForkOptions, BranchBackend } from './branch-backend.js';

/** What the branch log says the calls of this package come through. */
export const SURFACE = 'sdk:langgraph/langgraph-js';

/** A branch held by a live daemon session: the daemon leases it and captures every commit to its checkout. */
export class SessionBackend implements BranchBackend {
  readonly mode = 'session';
  readonly db: string;
  readonly branch: string;
  readonly #socket: string;
  readonly #client: Client;
  #session: Session;

  private constructor(socket: string, client: Client, session: Session) {
    this.#socket = socket;
    this.#client = client;
    this.#session = session;
    this.db = session.db;
    this.branch = session.branch;
  }

  /** Connects, creates `db` first when asked and it is missing, and opens a session on `db@branch`. */
  static async open(socket: string, db: string, branch: string, create: boolean): Promise<SessionBackend> {
    const client = await connect(socket, { origin: { surface: SURFACE } });
    try {
      if (create && !(await client.dbs()).includes(db)) {
        // Another process may create it between the listing and here; theirs is as good as ours.
        await client.create(db).catch((err: unknown) => {
          if (!isOffshootError(err, 'ALREADY_EXISTS')) throw err;
        });
      }
      return new SessionBackend(socket, client, await client.open(db, branch));
    } catch (err) {
      client.close();
      throw err;
    }
  }

  get path(): string {
    return this.#session.path;
  }

  flush(name: string, meta: Record<string, string> | undefined): Promise<number> {
    return this.#session.flush(name, meta === undefined ? {} : { meta });
  }

  async fork(newBranch: string, opts: BackendForkOptions): Promise<BranchBackend> {
    // A fork of the head must hold everything LangGraph wrote so far, not just the last background flush.
    if (opts.from === undefined) await this.#session.flush();
    await this.#client.fork(this.db, this.branch, newBranch, {
      ...(opts.from === undefined ? {} : { from: opts.from }),
      ...(opts.ttl === undefined ? {} : { ttl: opts.ttl }),
      ...(opts.meta === undefined ? {} : { meta: opts.meta }),
    });
    return SessionBackend.open(this.#socket, this.db, newBranch, false);
  }

  async rollback(to: string): Promise<void> {
    // The daemon refuses to roll back an open branch: close, roll back, and reopen whatever happened.
    await this.#session.close();
    try {
      await this.#client.rollback(this.db, this.branch, to);
    } finally {
      this.#session = await this.#client.open(this.db, this.branch);
    }
  }

  async promote(onto: string, force: boolean): Promise<number> {
    await this.#session.flush();
    return this.#client.promote(this.db, this.branch, onto, { force });
  }

  async destroy(force: boolean): Promise<void> {
    try {
      await this.#session.close();
      await this.#client.destroy(this.db, this.branch, { force });
    } finally {
      this.#client.close();
    }
  }

  async close(): Promise<void> {
    try {
      await this.#session.close();
    } finally {
      this.#client.close();
    }
  }
}
