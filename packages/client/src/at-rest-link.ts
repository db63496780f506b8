import type { BranchLink, BranchPlace, LinkForkOptions } from './branch-place.js';
import { createIfMissing } from './create-if-missing.js';
import type { DiffReport, MergeResult } from './types.js';

/**
 * A branch at rest, with no daemon: its checkout is a plain file, made durable only at a named checkpoint; fork,
 * promote and merge checkpoint a dirty checkout first. Each verb is one run of the `offshoot` CLI (a `StorePlace`).
 */
export class AtRestLink implements BranchLink {
  readonly mode = 'at-rest';
  readonly db: string;
  readonly branch: string;
  readonly #place: BranchPlace;
  #path: string;

  private constructor(place: BranchPlace, db: string, branch: string, path: string) {
    this.#place = place;
    this.db = db;
    this.branch = branch;
    this.#path = path;
  }

  /** Creates `db` first when asked and it is missing, then checks the branch out (uncheckpointed writes are kept). */
  static async open(place: BranchPlace, db: string, branch: string, opts: { create: boolean }): Promise<AtRestLink> {
    if (opts.create) await createIfMissing(() => place.create(db));
    return new AtRestLink(place, db, branch, (await place.checkout(db, branch)).path);
  }

  get path(): string {
    return this.#path;
  }

  /** Records the checkout as the checkpoint `name` (at rest every checkpoint is named). */
  async flush(name: string, meta: Record<string, string> | undefined): Promise<number> {
    return (await this.#place.checkpoint(this.db, this.branch, name, meta)).txid;
  }

  async fork(newBranch: string, opts: LinkForkOptions): Promise<BranchLink> {
    await this.#place.fork({
      db: this.db,
      source: this.branch,
      branch: newBranch,
      at: opts.from,
      ttl: opts.ttl,
      meta: opts.meta,
    });
    return AtRestLink.open(this.#place, this.db, newBranch, { create: false });
  }

  async rollback(to: string): Promise<void> {
    this.#path = (await this.#place.rollback(this.db, this.branch, to)).checkout;
  }

  async promote(onto: string, force: boolean, ifHead?: number): Promise<number> {
    return (await this.#place.promote(this.db, this.branch, onto, { force, ifHead })).txid;
  }

  merge(into: string, force: boolean, prefer?: 'source' | 'target'): Promise<MergeResult> {
    return this.#place.merge(this.db, this.branch, into, { force, prefer });
  }

  diff(base: string): Promise<DiffReport> {
    return this.#place.diff(base, `${this.db}@${this.branch}`);
  }

  async destroy(force: boolean): Promise<void> {
    await this.#place.destroy(this.db, this.branch, { force });
  }

  async close(): Promise<void> {
    // Nothing is held at rest: the checkout stays on disk for the next checkout of this branch.
  }
}
