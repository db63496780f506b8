import { type CheckpointReport, type CliTarget, type DiffReport, type QueryResult, runCli } from '@offshoot/client';
import type { BranchVerbs, CheckoutFile, ForkRequest } from './branch-verbs.js';
import { SURFACE } from './daemon-verbs.js';

/** A flag as `--name=value`, so a value the model wrote that starts with a dash stays a value. */
type Flag = `--${string}`;

function metaFlags(meta: Record<string, string> | undefined): Flag[] {
  return Object.entries(meta ?? {}).map(([k, v]): Flag => `--meta=${k}=${v}`);
}

/** The verbs at rest, with no daemon: each is one run of the `offshoot` CLI with `--json`, marked as an agent's. */
export class AtRestVerbs implements BranchVerbs {
  readonly #cli: CliTarget;
  readonly #actor: Flag[];

  /** `allowForce`: the human allowed the agent to force; the CLI decides what that permits. */
  constructor(cli: CliTarget, allowForce: boolean) {
    this.#cli = cli.origin === undefined ? { ...cli, origin: { surface: SURFACE } } : cli;
    this.#actor = ['--actor=agent', ...(allowForce ? (['--allow-force'] as const) : [])];
  }

  /**
   * One CLI run: the verb, its flags, then `--` and the positional arguments, so nothing the model wrote (a branch
   * name, a checkpoint, SQL starting with a comment) is ever read as a flag.
   */
  #run<T>(verb: string, flags: Flag[], positionals: string[]): Promise<T> {
    return runCli<T>(this.#cli, [verb, ...flags, '--', ...positionals]);
  }

  async fork(req: ForkRequest): Promise<number> {
    const flags: Flag[] = [...metaFlags(req.meta), ...this.#actor];
    if (req.at !== undefined) flags.push(`--at=${req.at}`);
    if (req.ttl !== undefined) flags.push(`--ttl=${req.ttl}`);
    return (await this.#run<{ txid: number }>('fork', flags, [`${req.db}@${req.source}`, req.branch])).txid;
  }

  async checkout(db: string, branch: string): Promise<CheckoutFile> {
    return {
      path: (await this.#run<{ path: string }>('checkout', this.#actor, [`${db}@${branch}`])).path,
      live: false,
    };
  }

  async checkpoint(db: string, branch: string, name: string, meta: Record<string, string> | undefined) {
    const flags = [...metaFlags(meta), ...this.#actor];
    const r = await this.#run<{ txid: number; kind: CheckpointReport['kind'] }>('checkpoint', flags, [
      `${db}@${branch}`,
      name,
    ]);
    return { txid: r.txid, kind: r.kind };
  }

  diff(left: string, right: string, summary: boolean) {
    return this.#run<Pick<DiffReport, 'schema' | 'tables'>>('diff', summary ? ['--summary'] : [], [left, right]);
  }

  query(db: string, branch: string, sql: string, at: string | undefined, limit: number | undefined) {
    const target = `${db}@${branch}${at === undefined ? '' : `@${at}`}`;
    return this.#run<QueryResult>('query', limit === undefined ? [] : [`--limit=${limit}`], [target, sql]);
  }

  async rollback(db: string, branch: string, to: string): Promise<string> {
    return (await this.#run<{ path: string }>('rollback', [`--to=${to}`, ...this.#actor], [`${db}@${branch}`])).path;
  }

  async promote(db: string, source: string, target: string, force: boolean, ifHead: number | undefined) {
    const flags: Flag[] = [`--onto=${target}`, ...(force ? (['--force'] as const) : []), ...this.#actor];
    if (ifHead !== undefined) flags.push(`--if-head=${ifHead}`);
    return (await this.#run<{ txid: number }>('promote', flags, [`${db}@${source}`])).txid;
  }

  async destroy(db: string, branch: string, force: boolean): Promise<void> {
    await this.#run('destroy', [...(force ? (['--force'] as const) : []), ...this.#actor], [`${db}@${branch}`]);
  }

  async isProtected(db: string, branch: string): Promise<boolean> {
    const { branches } = await this.#run<{ branches: Array<{ branch: string; protected: boolean }> }>(
      'status',
      [],
      [db],
    );
    return branches.find((b) => b.branch === branch)?.protected ?? false;
  }
}
