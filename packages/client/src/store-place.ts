import { AtRestLink } from './at-rest-link.js';
import { OffshootError } from './errors.js';
import { type CliTarget, runCli } from './at-rest-cli.js';
import type {
  BranchPlace,
  CheckRequest,
  CheckoutReport,
  DestroyReport,
  ForkReport,
  ForkRequest,
  MergeReport,
  PlaceMergeOptions,
  PlacePromoteOptions,
  PromoteReport,
  RollbackReport,
} from './branch-place.js';
import type { ActorOptions, DiffOptions, QueryOptions } from './client.js';
import type {
  CheckoutResult,
  CheckpointReport,
  DestroyResult,
  DiffReport,
  MergeResult,
  PromoteResult,
  QueryResult,
  RollbackResult,
} from './types.js';

/** A flag as `--name=value`, so a value that starts with a dash (a model wrote it) stays a value. */
type Flag = `--${string}`;

/** `meta` as flags: the one spelling, `--meta=key=value`. */
function metaFlags(meta: Record<string, string> | undefined): Flag[] {
  return Object.entries(meta ?? {}).map(([k, v]): Flag => `--meta=${k}=${v}`);
}

/** `--force` when asked for. */
function forceFlag(force: boolean | undefined): Flag[] {
  return force === true ? ['--force'] : [];
}

/** A promote's flags: its target, `--force` and `--if-head` as asked. */
function promoteFlags(onto: string, opts: PlacePromoteOptions): Flag[] {
  return [
    `--onto=${onto}`,
    ...forceFlag(opts.force),
    ...(opts.ifHead !== undefined ? ([`--if-head=${opts.ifHead}`] as const) : []),
  ];
}

/** A merge's flags: its target, how conflicts resolve, the checkpoint's name and `--force`, as asked. */
function mergeFlags(into: string, opts: PlaceMergeOptions): Flag[] {
  return [
    `--into=${into}`,
    ...(opts.prefer !== undefined ? ([`--prefer=${opts.prefer}`] as const) : []),
    // The resolved rows go on standard input (see merge).
    ...(opts.resolved !== undefined ? (['--resolve=-'] as const) : []),
    ...(opts.name !== undefined ? ([`--name=${opts.name}`] as const) : []),
    ...forceFlag(opts.force),
  ];
}

/** The exit code of a merge held by its conflicts: its JSON document is the answer, not a failure. */
const MERGE_CONFLICT_EXIT = 9;

/**
 * The branch verbs at rest, with no daemon: each is one run of the `offshoot` CLI with `--json`, said to be asked by
 * the place's actor (`--actor agent`, `--allow-force`; a human when omitted), so the CLI applies its rules.
 */
export class StorePlace implements BranchPlace {
  readonly mode = 'at-rest';
  readonly #cli: CliTarget;
  readonly #actor: Flag[];

  /** The verbs on the store `cli` names, asked by `actor`. */
  constructor(cli: CliTarget, actor: ActorOptions = {}) {
    // The place's origin says who asks when the target names none (the CLI records it in the branch log).
    this.#cli = cli.origin === undefined && actor.origin !== undefined ? { ...cli, origin: actor.origin } : cli;
    this.#actor =
      actor.actor === 'agent' ? ['--actor=agent', ...(actor.allowForce ? (['--allow-force'] as const) : [])] : [];
  }

  /**
   * One CLI run: the verb, its flags, then `--` and the positional arguments, so nothing a caller passes (a branch
   * name, a checkpoint, SQL starting with a comment) is ever read as a flag.
   */
  #run<T>(
    verb: string,
    flags: Flag[],
    positionals: string[],
    answers: readonly number[] = [],
    input?: string,
  ): Promise<T> {
    return runCli<T>(this.#cli, [verb, ...flags, ...this.#actor, '--', ...positionals], {
      answers,
      ...(input !== undefined ? { input } : {}),
    });
  }

  async create(db: string): Promise<void> {
    await this.#run('create', [], [db]);
  }

  open(db: string, branch: string, opts: { create: boolean }): Promise<AtRestLink> {
    return AtRestLink.open(this, db, branch, opts);
  }

  async fork(req: ForkRequest): Promise<ForkReport> {
    if (req.ephemeral)
      throw new OffshootError(
        'UNSUPPORTED',
        'an ephemeral fork lives in the daemon that makes it, and this place has none',
        {
          hint: 'fork through a daemon (a DaemonPlace), or without ephemeral',
        },
      );
    const flags: Flag[] = metaFlags(req.meta);
    if (req.at !== undefined) flags.push(`--at=${req.at}`);
    if (req.ttl !== undefined) flags.push(`--ttl=${req.ttl}`);
    const names = [req.branch, ...(req.more ?? [])];
    const r = await this.#run<{ txid: number; branches?: string[]; ttl?: string; expires_at?: string }>('fork', flags, [
      `${req.db}@${req.source}`,
      ...names,
    ]);
    return { txid: r.txid, branches: r.branches ?? names, ttl: r.ttl ?? null, expires_at: r.expires_at ?? null };
  }

  async checkout(db: string, branch: string): Promise<CheckoutReport> {
    const r = await this.#run<CheckoutResult & { path: string }>('checkout', [], [`${db}@${branch}`]);
    return { ...r, live: false };
  }

  async checkpoint(db: string, branch: string, name: string, meta?: Record<string, string>) {
    const r = await this.#run<CheckpointReport>('checkpoint', metaFlags(meta), [`${db}@${branch}`, name]);
    return { txid: r.txid, kind: r.kind };
  }

  diff(left: string, right: string, opts: DiffOptions = {}): Promise<DiffReport> {
    const flags: Flag[] = opts.summary === true ? ['--summary'] : [];
    if (opts.table !== undefined) flags.push(`--table=${opts.table}`);
    if (opts.limit !== undefined) flags.push(`--limit=${opts.limit}`);
    return this.#run<DiffReport>('diff', flags, [left, right]);
  }

  async query(db: string, branch: string, sql: string, opts: QueryOptions = {}): Promise<QueryResult> {
    const target = `${db}@${branch}${opts.at === undefined ? '' : `@${opts.at}`}`;
    const r = await this.#run<QueryResult>('query', opts.limit === undefined ? [] : [`--limit=${opts.limit}`], [
      target,
      sql,
    ]);
    return { source: r.source, columns: r.columns, rows: r.rows, truncated: r.truncated };
  }

  async rollback(db: string, branch: string, to: string): Promise<RollbackReport> {
    const r = await this.#run<
      Omit<RollbackResult, 'abandoned'> & { abandoned?: RollbackResult['abandoned']; path: string }
    >('rollback', [`--to=${to}`], [`${db}@${branch}`]);
    return {
      checkpoint: r.checkpoint,
      txid: r.txid,
      backup: r.backup,
      ...(r.earlier_backup !== undefined ? { earlier_backup: r.earlier_backup } : {}),
      abandoned: r.abandoned ?? null,
      refreshed: r.refreshed,
      ...(r.protected !== undefined ? { protected: r.protected } : {}),
      checkout: r.path,
      warnings: [],
    };
  }

  async promote(db: string, source: string, onto: string, opts: PlacePromoteOptions = {}): Promise<PromoteReport> {
    const r = await this.#run<Omit<PromoteResult, 'checkout' | 'if_head'> & { path: string }>(
      'promote',
      promoteFlags(onto, opts),
      [`${db}@${source}`],
    );
    return {
      txid: r.txid,
      backup: r.backup,
      ...(r.earlier_backup !== undefined ? { earlier_backup: r.earlier_backup } : {}),
      // The CLI made the compare-and-swap itself (one that did not know --if-head refuses the flag).
      ...(opts.ifHead !== undefined ? { if_head: opts.ifHead } : {}),
      checkout: r.path,
      refreshed: r.refreshed,
      source_live: r.source_live,
      warnings: [],
    };
  }

  async merge(db: string, source: string, into: string, opts: PlaceMergeOptions = {}): Promise<MergeReport> {
    const src = opts.at !== undefined ? `${db}@${source}@${opts.at}` : `${db}@${source}`;
    const r = await this.#run<MergeResult>(
      'merge',
      mergeFlags(into, opts),
      [src],
      [MERGE_CONFLICT_EXIT],
      opts.resolved !== undefined ? JSON.stringify(opts.resolved) : undefined,
    );
    return { ...r, warnings: [] };
  }

  async destroy(db: string, branch: string, opts: { force?: boolean } = {}): Promise<DestroyReport> {
    const r = await this.#run<DestroyResult>('destroy', forceFlag(opts.force), [`${db}@${branch}`]);
    return {
      removed_checkout: r.removed_checkout,
      ...(r.discarded !== undefined ? { discarded: r.discarded } : {}),
      warnings: [],
    };
  }

  async check(req: CheckRequest): Promise<void> {
    switch (req.verb) {
      case 'rollback':
        await this.#run('rollback', ['--check', `--to=${req.to}`], [`${req.db}@${req.branch}`]);
        return;
      case 'promote':
        await this.#run(
          'promote',
          ['--check', ...promoteFlags(req.onto, { force: req.force, ifHead: req.ifHead })],
          [`${req.db}@${req.source}`],
        );
        return;
      case 'merge':
        await this.#run(
          'merge',
          ['--check', ...mergeFlags(req.into, { force: req.force })],
          [`${req.db}@${req.source}${req.at !== undefined ? `@${req.at}` : ''}`],
        );
        return;
      case 'destroy':
        await this.#run('destroy', ['--check', ...forceFlag(req.force)], [`${req.db}@${req.branch}`]);
        return;
    }
  }
}
