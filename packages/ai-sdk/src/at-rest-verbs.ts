import { type CheckpointReport, type CliTarget, type DiffReport, type QueryResult, runCli } from '@offshoot/client';
import type { BranchVerbs, CheckoutFile, ForkRequest } from './branch-verbs.js';

function metaFlags(meta: Record<string, string> | undefined): string[] {
  return Object.entries(meta ?? {}).flatMap(([k, v]) => ['--meta', `${k}=${v}`]);
}

/** The verbs at rest, with no daemon: each is one run of the `offshoot` CLI with `--json`, marked as an agent's. */
export class AtRestVerbs implements BranchVerbs {
  readonly via = 'at-rest';
  readonly #cli: CliTarget;
  readonly #actor: string[];

  /** `allowForce`: the human allowed the agent to force; the CLI decides what that permits. */
  constructor(cli: CliTarget, allowForce: boolean) {
    this.#cli = cli;
    this.#actor = ['--actor', 'agent', ...(allowForce ? ['--allow-force'] : [])];
  }

  async fork(req: ForkRequest): Promise<number> {
    const args = ['fork', `${req.db}@${req.source}`, req.branch, ...metaFlags(req.meta), ...this.#actor];
    if (req.at !== undefined) args.push('--at', req.at);
    if (req.ttl !== undefined) args.push('--ttl', req.ttl);
    return (await runCli<{ txid: number }>(this.#cli, args)).txid;
  }

  async checkout(db: string, branch: string): Promise<CheckoutFile> {
    return { path: (await runCli<{ path: string }>(this.#cli, ['checkout', `${db}@${branch}`])).path, live: false };
  }

  async checkpoint(db: string, branch: string, name: string, meta: Record<string, string> | undefined) {
    const args = ['checkpoint', `${db}@${branch}`, name, ...metaFlags(meta), ...this.#actor];
    const r = await runCli<{ txid: number; kind: CheckpointReport['kind'] }>(this.#cli, args);
    return { txid: r.txid, kind: r.kind };
  }

  diff(left: string, right: string, summary: boolean) {
    return runCli<Pick<DiffReport, 'schema' | 'tables'>>(this.#cli, [
      'diff',
      left,
      right,
      ...(summary ? ['--summary'] : []),
    ]);
  }

  query(db: string, branch: string, sql: string, at: string | undefined, limit: number | undefined) {
    const target = `${db}@${branch}${at === undefined ? '' : `@${at}`}`;
    return runCli<QueryResult>(this.#cli, [
      'query',
      target,
      sql,
      ...(limit === undefined ? [] : ['--limit', String(limit)]),
    ]);
  }

  async rollback(db: string, branch: string, to: string): Promise<string> {
    return (await runCli<{ path: string }>(this.#cli, ['rollback', `${db}@${branch}`, '--to', to, ...this.#actor]))
      .path;
  }

  async promote(db: string, source: string, target: string, force: boolean): Promise<number> {
    const args = ['promote', `${db}@${source}`, '--onto', target, ...(force ? ['--force'] : []), ...this.#actor];
    return (await runCli<{ txid: number }>(this.#cli, args)).txid;
  }

  async destroy(db: string, branch: string, force: boolean): Promise<void> {
    await runCli(this.#cli, ['destroy', `${db}@${branch}`, ...(force ? ['--force'] : []), ...this.#actor]);
  }

  async isProtected(db: string, branch: string): Promise<boolean> {
    const { branches } = await runCli<{ branches: Array<{ branch: string; protected: boolean }> }>(this.#cli, [
      'status',
      db,
    ]);
    return branches.find((b) => b.branch === branch)?.protected ?? false;
  }
}
