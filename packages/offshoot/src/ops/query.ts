import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fail } from '../core/errors.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { readOnlyCheckout } from './helpers/checkout/read-only-checkout.js';
import { readBranch } from './helpers/branch/branch-ref.js';
import type { OpsContext } from './helpers/context/context.js';
import { cachedChain } from './helpers/chain/materialize.js';
import { checkoutPath } from './helpers/context/paths.js';
import type { QueryAnswer, QueryJob } from './helpers/query/query-child.js';
import { checkReadOnlySql } from './helpers/query/read-only-sql.js';

/** Rows returned when the caller names no limit, and the most a caller may ask for. */
export const QUERY_LIMITS = { defaultRows: 100, maxRows: 1000, defaultTimeoutMs: 5000 } as const;

/** Options of query: a checkpoint to read instead of the head, a row limit, a time limit. */
export interface QueryOptions {
  at?: string;
  limit?: number;
  timeoutMs?: number;
  /** Stops the statement (the child is killed) when aborted; the query then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** One query's answer and where it was read from. */
export interface QueryResult {
  db: string;
  branch: string;
  at: string | undefined;
  /** `checkout`: the branch's writable checkout, read-only; `head`: its durable head; `checkpoint`: a named checkpoint. */
  source: 'checkout' | 'head' | 'checkpoint';
  columns: string[];
  rows: unknown[][];
  truncated: boolean;
}

// Under tsx the module is the .ts source and, built by tsc, .js beside this file; from the one-file CLI bundle
// (dist/cli.cjs) the child is tsc's dist/ops/helpers/query/query-child.js, which ships beside the bundle.
const HERE = import.meta.url;
const CHILD = HERE.endsWith('/cli.cjs')
  ? new URL('./ops/helpers/query/query-child.js', HERE)
  : new URL(`./helpers/query/query-child.${HERE.endsWith('.ts') ? 'ts' : 'js'}`, HERE);

function runInChild(job: QueryJob, timeoutMs: number, signal?: AbortSignal): Promise<QueryAnswer> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const child = fork(CHILD, [], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced' });
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const aborted = (): void =>
      done(() => {
        child.kill('SIGKILL');
        reject(signal?.reason);
      });
    signal?.addEventListener('abort', aborted, { once: true });
    const done = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      fn();
    };
    const timedOut = (): void =>
      done(() => {
        child.kill('SIGKILL');
        reject(
          fail('TIMEOUT', `query did not finish within ${timeoutMs} ms and was stopped`, {
            hint: 'narrow the query (a WHERE clause, an index, a smaller LIMIT)',
          }),
        );
      });
    child.on('message', (msg: QueryAnswer | { ready: true }) => {
      if ('ready' in msg) {
        timer = setTimeout(timedOut, timeoutMs);
        child.send(job);
      } else done(() => resolve(msg));
    });
    child.once('error', (err) => done(() => reject(fail('INTERNAL', `query process failed: ${err.message}`))));
    child.once('exit', (code, signal) =>
      done(() => reject(fail('INTERNAL', `query process exited (${signal ?? code}) before answering`))),
    );
  });
}

/**
 * Runs one read-only statement against a branch or checkpoint: a checkpoint through its immutable read-only
 * checkout, the head through the branch's writable checkout when there is one (opened read-only, so what an agent
 * wrote there shows) and otherwise through the durable head's cache entry. The statement runs in a child process on
 * a read-only, query_only connection, so a write is refused by SQLite as well as by the checks here, and a runaway
 * one is killed at the time limit. At most `limit` rows come back; BLOBs are summarised.
 */
export async function query(ctx: OpsContext, t: Target, sql: string, opts: QueryOptions = {}): Promise<QueryResult> {
  const limit = opts.limit ?? QUERY_LIMITS.defaultRows;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > QUERY_LIMITS.maxRows) {
    throw fail('INVALID_ARGUMENT', `limit ${limit} is out of range (1..${QUERY_LIMITS.maxRows})`, {
      hint: `ask for at most ${QUERY_LIMITS.maxRows} rows and page with LIMIT/OFFSET in the SQL`,
    });
  }
  checkReadOnlySql(sql);
  let file: string;
  let source: QueryResult['source'];
  if (opts.at !== undefined) {
    file = (await readOnlyCheckout(ctx, t, opts.at)).path;
    source = 'checkpoint';
  } else {
    const { ref } = await readBranch(ctx, t.db, t.branch);
    const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
    if (existsSync(path)) {
      file = path;
      source = 'checkout';
    } else {
      const chain = await new ChainResolver(ctx.store).resolve(ref.lineage, ref.head_txid);
      file = (await cachedChain(ctx, t.db, chain)).path;
      source = 'head';
    }
  }
  const answer = await runInChild({ file, sql, limit }, opts.timeoutMs ?? QUERY_LIMITS.defaultTimeoutMs, opts.signal);
  if (!answer.ok) {
    throw fail('INVALID_ARGUMENT', `query refused: ${answer.message}`, {
      hint:
        answer.readOnly === false
          ? "a query only reads; write in a fork's checkout instead"
          : 'check the SQL against the schema (SELECT name, sql FROM sqlite_schema)',
    });
  }
  return {
    db: t.db,
    branch: t.branch,
    at: opts.at,
    source,
    columns: answer.columns,
    rows: answer.rows,
    truncated: answer.truncated,
  };
}
