import { type ActorOptions, type Client, OffshootError, type WireOrigin } from '@offshoot/client';

/** What the branch log says the tools' calls come through: this package, for the Vercel AI SDK. */
export const SURFACE = 'sdk:ai-sdk/ai';
import type { BranchVerbs, CheckoutFile, ForkRequest } from './branch-verbs.js';

/** The verbs over a daemon client: each is one request, marked as an agent's. */
export class DaemonVerbs implements BranchVerbs {
  readonly #client: Client;
  readonly #actor: ActorOptions;
  /** The same, as request fields, for the ops sent through `request`. */
  readonly #wire: { actor: 'agent'; allow_force?: true; origin: WireOrigin };

  /** `allowForce`: the human allowed the agent to force; the daemon decides what that permits. */
  constructor(client: Client, allowForce: boolean) {
    this.#client = client;
    const origin = { surface: SURFACE };
    this.#actor = { actor: 'agent', origin, ...(allowForce ? { allowForce } : {}) };
    this.#wire = { actor: 'agent', origin, ...(allowForce ? { allow_force: true as const } : {}) };
  }

  fork(req: ForkRequest): Promise<number> {
    return this.#client.fork(req.db, req.source, req.branch, {
      ...(req.at !== undefined ? { from: req.at } : {}),
      ...(req.ttl !== undefined ? { ttl: req.ttl } : {}),
      ...(req.meta !== undefined ? { meta: req.meta } : {}),
      ...this.#actor,
    });
  }

  /**
   * A healthy session open on the branch (the harness's) gives its live path; otherwise an at-rest checkout. Either
   * is writable, so the daemon decides whether the agent may have it.
   */
  async checkout(db: string, branch: string): Promise<CheckoutFile> {
    const res = await this.#client.request({ op: 'checkout', db, branch, live: true, ...this.#wire });
    if (res.checkout === undefined)
      throw new OffshootError('BAD_RESPONSE', 'malformed response from daemon: checkout returned no checkout path');
    return { path: res.checkout, live: res.live === true };
  }

  checkpoint(db: string, branch: string, name: string, meta: Record<string, string> | undefined) {
    return this.#client.checkpoint(db, branch, name, { ...(meta !== undefined ? { meta } : {}), ...this.#actor });
  }

  diff(left: string, right: string, summary: boolean) {
    return this.#client.diff(left, right, { summary });
  }

  query(db: string, branch: string, sql: string, at: string | undefined, limit: number | undefined) {
    return this.#client.query(db, branch, sql, {
      ...(at !== undefined ? { at } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
  }

  rollback(db: string, branch: string, to: string): Promise<string> {
    return this.#client.rollback(db, branch, to, this.#actor);
  }

  promote(db: string, source: string, target: string, force: boolean, ifHead: number | undefined): Promise<number> {
    return this.#client.promote(db, source, target, {
      force,
      ...(ifHead !== undefined ? { ifHead } : {}),
      ...this.#actor,
    });
  }

  destroy(db: string, branch: string, force: boolean): Promise<void> {
    return this.#client.destroy(db, branch, { force, ...this.#actor });
  }

  async isProtected(db: string, branch: string): Promise<boolean> {
    return (await this.#client.branches(db)).find((b) => b.branch === branch)?.protected ?? false;
  }
}
