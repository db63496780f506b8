import type {
  BranchPlace,
  CheckRequest,
  CheckoutReport,
  ForkReport,
  ForkRequest,
  PlaceMergeOptions,
  PlacePromoteOptions,
} from './branch-place.js';
import type { ActorOptions, Client, DiffOptions, QueryOptions } from './client.js';
import { OffshootError } from './errors.js';
import {
  requireCheckout,
  requireEphemeral,
  requireIfHeadChecked,
  requireResult,
  requireTxid,
} from './result-fields.js';
import { SessionLink } from './session-link.js';
import type {
  CheckoutResult,
  DestroyResult,
  ForkResult,
  MergeResult,
  PromoteResult,
  RollbackResult,
  WireRequest,
  WireResponse,
} from './types.js';

/**
 * The actor fields of a request: none for a human, so a daemon sees the request it always saw; and the origin the
 * place was given, for the branch log (else the connection's).
 */
function wireActor(actor: ActorOptions): Pick<WireRequest, 'actor' | 'allow_force' | 'origin'> {
  const origin = actor.origin === undefined ? {} : { origin: actor.origin };
  if (actor.actor !== 'agent') return origin;
  return { actor: 'agent', ...(actor.allowForce ? { allow_force: true } : {}), ...origin };
}

/** The request fields of a checked call, as the verb's own request names them. */
function checkedFields(req: CheckRequest): WireRequest {
  switch (req.verb) {
    case 'rollback':
      return { op: 'check', verb: req.verb, db: req.db, branch: req.branch, name: req.to };
    case 'promote':
      return {
        op: 'check',
        verb: req.verb,
        db: req.db,
        branch: req.source,
        name: req.onto,
        force: req.force,
        ...(req.ifHead !== undefined ? { if_head: req.ifHead } : {}),
      };
    case 'merge':
      return {
        op: 'check',
        verb: req.verb,
        db: req.db,
        branch: req.source,
        into: req.into,
        force: req.force,
        ...(req.at !== undefined ? { from: req.at } : {}),
      };
    case 'destroy':
      return { op: 'check', verb: req.verb, db: req.db, branch: req.branch, force: req.force };
  }
}

/**
 * The branch verbs over a daemon client, each one request said to be asked by the place's actor (a human unless
 * `actor: 'agent'`); the daemon applies its rules. Links (`open`) are sessions, each on a connection of its own.
 */
export class DaemonPlace implements BranchPlace {
  readonly mode = 'daemon';
  readonly #client: Client;
  readonly #actor: ActorOptions;

  /** The verbs over `client` (the caller closes it), asked by `actor`. */
  constructor(client: Client, actor: ActorOptions = {}) {
    this.#client = client;
    this.#actor = {
      ...(actor.actor === 'agent' ? { actor: 'agent', ...(actor.allowForce ? { allowForce: true } : {}) } : {}),
      ...(actor.origin !== undefined ? { origin: actor.origin } : {}),
    };
  }

  #request(req: WireRequest): Promise<WireResponse> {
    return this.#client.request({ ...req, ...wireActor(this.#actor) });
  }

  async create(db: string): Promise<void> {
    await this.#client.create(db);
  }

  async open(db: string, branch: string, opts: { create: boolean }): Promise<SessionLink> {
    const socket = this.#client.socketPath;
    if (socket === undefined)
      throw new OffshootError('USAGE', 'a daemon place opens sessions on connections of its own, and has no socket', {
        hint: 'make the client with connect(socketPath)',
      });
    return SessionLink.open(socket, db, branch, { ...opts, ...this.#actor });
  }

  async fork(req: ForkRequest): Promise<ForkReport> {
    const names = [req.branch, ...(req.more ?? [])];
    const res = await this.#request({
      op: 'fork',
      db: req.db,
      branch: req.source,
      ...(names.length > 1 ? { names } : { name: req.branch }),
      from: req.at,
      ttl: req.ttl,
      meta: req.meta,
      ...(req.ephemeral ? { ephemeral: true } : {}),
    });
    if (req.ephemeral) requireEphemeral(res, req.db, names);
    const applied = res.result as Partial<ForkResult> | undefined;
    return {
      txid: requireTxid(res, 'fork'),
      branches: res.forks ?? names,
      ttl: applied?.ttl ?? req.ttl ?? null,
      expires_at: applied?.expires_at ?? null,
      ...(req.ephemeral ? { ephemeral: true as const } : {}),
    };
  }

  async checkout(db: string, branch: string): Promise<CheckoutReport> {
    const res = await this.#request({ op: 'checkout', db, branch, live: true });
    const held = (res.result ?? {}) as Partial<CheckoutResult>;
    return { ...held, path: requireCheckout(res, 'checkout'), live: res.live === true };
  }

  checkpoint(db: string, branch: string, name: string, meta?: Record<string, string>) {
    return this.#client.checkpoint(db, branch, name, { ...(meta !== undefined ? { meta } : {}), ...this.#actor });
  }

  diff(left: string, right: string, opts: DiffOptions = {}) {
    return this.#client.diff(left, right, opts);
  }

  query(db: string, branch: string, sql: string, opts: QueryOptions = {}) {
    return this.#client.query(db, branch, sql, opts);
  }

  async rollback(db: string, branch: string, to: string) {
    const res = await this.#request({ op: 'rollback', db, branch, name: to });
    const r = requireResult<RollbackResult>(res, 'rollback');
    return { ...r, checkout: requireCheckout(res, 'rollback'), warnings: res.warnings ?? [] };
  }

  async promote(db: string, source: string, onto: string, opts: PlacePromoteOptions = {}) {
    const { ifHead } = opts;
    const res = await this.#request({
      op: 'promote',
      db,
      branch: source,
      name: onto,
      force: opts.force,
      ...(ifHead !== undefined ? { if_head: ifHead } : {}),
    });
    // A daemon too old to know if_head promotes without the compare-and-swap: refused here, as the client does.
    if (ifHead !== undefined) requireIfHeadChecked(res, ifHead);
    return { ...requireResult<PromoteResult>(res, 'promote'), warnings: res.warnings ?? [] };
  }

  async merge(db: string, source: string, into: string, opts: PlaceMergeOptions = {}) {
    const res = await this.#request({
      op: 'merge',
      db,
      branch: source,
      into,
      force: opts.force,
      ...(opts.at !== undefined ? { from: opts.at } : {}),
      ...(opts.prefer !== undefined ? { prefer: opts.prefer } : {}),
      ...(opts.resolved !== undefined ? { resolved: opts.resolved } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
    });
    return { ...requireResult<MergeResult>(res, 'merge'), warnings: res.warnings ?? [] };
  }

  async destroy(db: string, branch: string, opts: { force?: boolean } = {}) {
    const res = await this.#request({ op: 'destroy', db, branch, force: opts.force });
    return { ...requireResult<DestroyResult>(res, 'destroy'), warnings: res.warnings ?? [] };
  }

  async check(req: CheckRequest): Promise<void> {
    await this.#request(checkedFields(req));
  }
}
