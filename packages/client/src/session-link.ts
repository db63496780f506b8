import type { BranchLink, LinkForkOptions } from './branch-place.js';
import { type ActorOptions, type Client, connect } from './client.js';
import { createIfMissing } from './create-if-missing.js';
import type { Session } from './session.js';
import type { DiffReport, MergeResult } from './types.js';

/** A branch held by a live daemon session, on a connection of its own: the daemon captures every commit. */
export class SessionLink implements BranchLink {
  readonly mode = 'session';
  readonly db: string;
  readonly branch: string;
  readonly #socket: string;
  readonly #client: Client;
  readonly #actor: ActorOptions;
  #session: Session;

  private constructor(socket: string, client: Client, session: Session, actor: ActorOptions) {
    this.#socket = socket;
    this.#client = client;
    this.#session = session;
    this.#actor = actor;
    this.db = session.db;
    this.branch = session.branch;
  }

  /** Connects (as `actor`), creates `db` first when asked and it is missing, and opens a session on `db@branch`. */
  static async open(
    socket: string,
    db: string,
    branch: string,
    opts: { create: boolean } & ActorOptions,
  ): Promise<SessionLink> {
    const actor: ActorOptions = {
      ...(opts.actor === 'agent' ? { actor: 'agent', allowForce: opts.allowForce === true } : {}),
      ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
    };
    const client = await connect(socket, actor);
    try {
      if (opts.create && !(await client.dbs()).includes(db)) await createIfMissing(() => client.create(db));
      return new SessionLink(socket, client, await client.open(db, branch), actor);
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

  async fork(newBranch: string, opts: LinkForkOptions): Promise<BranchLink> {
    // A fork of the head must hold everything written so far, not just the last background flush.
    if (opts.from === undefined) await this.#session.flush();
    await this.#client.fork(this.db, this.branch, newBranch, {
      ...(opts.from === undefined ? {} : { from: opts.from }),
      ...(opts.ttl === undefined ? {} : { ttl: opts.ttl }),
      ...(opts.meta === undefined ? {} : { meta: opts.meta }),
    });
    return SessionLink.open(this.#socket, this.db, newBranch, { create: false, ...this.#actor });
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

  async promote(onto: string, force: boolean, ifHead?: number): Promise<number> {
    await this.#session.flush();
    return this.#client.promote(this.db, this.branch, onto, { force, ...(ifHead !== undefined ? { ifHead } : {}) });
  }

  /** The daemon flushes this session before it merges, so the merge holds every write captured so far. */
  merge(into: string, force: boolean, prefer?: 'source' | 'target'): Promise<MergeResult> {
    return this.#client.merge(this.db, this.branch, into, { force, ...(prefer !== undefined ? { prefer } : {}) });
  }

  diff(base: string): Promise<DiffReport> {
    return this.#client.diff(base, `${this.db}@${this.branch}`);
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
