import type { Client } from './client.js';
import type { Session } from './session.js';
import type { DiffReport } from './types.js';

/** Options of `Client.episode`. */
export interface EpisodeOptions {
  /** The checkpoint of the source to start from (else its head). */
  fromCheckpoint?: string;
  /** The branch the episode forks (default `main`). */
  source?: string;
  /** The episode's branch name (default `ep-` and a random suffix). */
  name?: string;
  /** Metadata recorded on the fork. */
  meta?: Record<string, string>;
  /** Reap the episode after this long without a touch, should its owner never close it (a Go duration). */
  ttl?: string;
  /** False forks a durable branch instead (what a run meant to be inspected after a failure needs); default true. */
  ephemeral?: boolean;
}

/** What an episode left: its changes against the state it started from, and the checkpoint it was kept as, if any. */
export interface EpisodeResult {
  /** The summary diff (statuses and counts) of the episode's branch against the state it was forked from. */
  diff: DiffReport;
  /** The checkpoint `keep` named: the branch is then durable and stays. Undefined for a discarded episode. */
  kept: string | undefined;
}

/** A fresh episode branch name: `ep-` and 12 random hex digits. */
function episodeName(): string {
  return `ep-${globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

/**
 * One throwaway run on an ephemeral fork with a live session: write to `path` with any SQLite driver. Closing it
 * (`close()`, or leaving an `await using` block) ends the session, diffs the branch against the state it was forked
 * from, and destroys it unless `keep` was called; the fork, held by the daemon until then, never reaches the store.
 */
export class Episode implements AsyncDisposable {
  readonly db: string;
  readonly branch: string;
  /** The live checkout: the file to open. */
  readonly path: string;
  #kept: string | undefined;
  #closing: Promise<EpisodeResult> | undefined;
  /** Set once the episode is closed. */
  result: EpisodeResult | undefined;
  readonly #client: Client;
  readonly #session: Session;

  /** Made by `Client.episode`. */
  constructor(client: Client, session: Session) {
    this.#client = client;
    this.#session = session;
    this.db = session.db;
    this.branch = session.branch;
    this.path = session.path;
  }

  /**
   * Keeps the episode as checkpoint `name`: everything written so far becomes a durable branch in the store (the
   * episode's own), which closing then leaves in place. Returns the checkpoint's txid.
   */
  async keep(name: string, opts: { meta?: Record<string, string> } = {}): Promise<number> {
    const txid = await this.#session.flush(name, opts);
    this.#kept = name;
    return txid;
  }

  /**
   * Makes what was written so far durable in the daemon, as the episode's head (it stays ephemeral); with a name, keeps
   * the episode as that checkpoint, as `keep` does. Returns the txid.
   */
  flush(name?: string, opts: { meta?: Record<string, string> } = {}): Promise<number> {
    if (name !== undefined && name !== '') return this.keep(name, opts);
    return this.#session.flush();
  }

  /** Ends the episode (once; later calls return the same result): closes the session, diffs, and discards it unless kept. */
  close(): Promise<EpisodeResult> {
    this.#closing ??= this.#finish();
    return this.#closing;
  }

  async #finish(): Promise<EpisodeResult> {
    await this.#session.close();
    try {
      const diff = await this.#client.diff(`${this.db}@${this.branch}@fork`, `${this.db}@${this.branch}`, {
        summary: true,
      });
      this.result = { diff, kept: this.#kept };
      return this.result;
    } finally {
      if (this.#kept === undefined) await this.#client.destroy(this.db, this.branch);
    }
  }

  /** `await using`: closes the episode. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Forks an ephemeral episode branch and opens a live session on it (what `Client.episode` does). */
export async function startEpisode(client: Client, db: string, opts: EpisodeOptions): Promise<Episode> {
  const branch = opts.name ?? episodeName();
  const source = opts.source ?? 'main';
  await client.fork(db, source, branch, {
    ephemeral: opts.ephemeral ?? true,
    ...(opts.fromCheckpoint !== undefined ? { from: opts.fromCheckpoint } : {}),
    ...(opts.meta !== undefined ? { meta: opts.meta } : {}),
    ...(opts.ttl !== undefined ? { ttl: opts.ttl } : {}),
  });
  try {
    return new Episode(client, await client.open(db, branch));
  } catch (err) {
    await client.destroy(db, branch).catch(() => undefined);
    throw err;
  }
}
