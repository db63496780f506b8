import { type CliTarget, isOffshootError, runCli } from '@offshoot/client';
import type { BackendForkOptions, BranchBackend } from './branch-backend.js';
import { SURFACE } from './session-backend.js';

interface PathResult {
  path: string;
}
interface TxidResult {
  txid: number;
}

function metaFlags(meta: Record<string, string> | undefined): string[] {
  return Object.entries(meta ?? {}).flatMap(([k, v]) => ['--meta', `${k}=${v}`]);
}

/**
 * A branch driven through the at-rest CLI verbs, with no daemon: its checkout is a plain file, and it becomes
 * durable only at a named checkpoint (`offshoot checkpoint`); fork and promote checkpoint a dirty checkout first.
 */
export class AtRestBackend implements BranchBackend {
  readonly mode = 'at-rest';
  readonly db: string;
  readonly branch: string;
  readonly #cli: CliTarget;
  #path: string;

  private constructor(cli: CliTarget, db: string, branch: string, path: string) {
    this.#cli = cli;
    this.db = db;
    this.branch = branch;
    this.#path = path;
  }

  /** Creates `db` first when asked and it is missing, then materializes the branch's checkout. */
  static async open(given: CliTarget, db: string, branch: string, create: boolean): Promise<AtRestBackend> {
    const cli: CliTarget = given.origin === undefined ? { ...given, origin: { surface: SURFACE } } : given;
    if (create) {
      await runCli(cli, ['create', db]).catch((err: unknown) => {
        if (!isOffshootError(err, 'ALREADY_EXISTS')) throw err;
      });
    }
    const { path } = await runCli<PathResult>(cli, ['checkout', `${db}@${branch}`]);
    return new AtRestBackend(cli, db, branch, path);
  }

  get path(): string {
    return this.#path;
  }

  get #target(): string {
    return `${this.db}@${this.branch}`;
  }

  async flush(name: string, meta: Record<string, string> | undefined): Promise<number> {
    const args = ['checkpoint', this.#target, name, ...metaFlags(meta)];
    return (await runCli<TxidResult>(this.#cli, args)).txid;
  }

  async fork(newBranch: string, opts: BackendForkOptions): Promise<BranchBackend> {
    await runCli(this.#cli, [
      'fork',
      this.#target,
      newBranch,
      ...(opts.from === undefined ? [] : ['--at', opts.from]),
      ...(opts.ttl === undefined ? [] : ['--ttl', opts.ttl]),
      ...metaFlags(opts.meta),
    ]);
    return AtRestBackend.open(this.#cli, this.db, newBranch, false);
  }

  async rollback(to: string): Promise<void> {
    this.#path = (await runCli<PathResult>(this.#cli, ['rollback', this.#target, '--to', to])).path;
  }

  async promote(onto: string, force: boolean): Promise<number> {
    const args = ['promote', this.#target, '--onto', onto, ...(force ? ['--force'] : [])];
    return (await runCli<TxidResult>(this.#cli, args)).txid;
  }

  async destroy(force: boolean): Promise<void> {
    await runCli(this.#cli, ['destroy', this.#target, ...(force ? ['--force'] : [])]);
  }

  async close(): Promise<void> {
    // Nothing is held at rest: the checkout stays on disk for the next checkout of this branch.
  }
}
