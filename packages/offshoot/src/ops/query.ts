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
import { QuerySlots } from './helpers/query/query-slots.js';
import { checkReadOnlySql } from './helpers/query/read-only-sql.js';

/**
 * Rows returned when the caller names no limit and the most a caller may ask for; the bytes of rows an answer may
 * hold (as JSON); the default time limit; and how many queries run at once in one process (each in a child
 * process), and how many more may wait for a slot.
 */
export const QUERY_LIMITS = {
  defaultRows: 100,
  maxRows: 1000,
  maxBytes: 4 << 20,
  defaultTimeoutMs: 5000,
  concurrent: 4,
  queued: 16,
} as const;

const slots = new QuerySlots(QUERY_LIMITS.concurrent, QUERY_LIMITS.queued);

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
  /** True when rows were left out: by the row limit or by the byte cap (`truncatedBy`). */
  truncated: boolean;
  truncatedBy?: 'rows' | 'bytes';
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
 * one is killed at the time limit, which runs until its answer is in. At most `limit` rows and QUERY_LIMITS.maxBytes
 * of them come back (`truncated` says when either cut the answer); BLOBs are summarised. At most
 * QUERY_LIMITS.concurrent queries run at once; others wait for a slot, or are refused BUSY past the queue.
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
  const timeoutMs = opts.timeoutMs ?? QUERY_LIMITS.defaultTimeoutMs;
  const job = { file, sql, limit, maxBytes: QUERY_LIMITS.maxBytes };
  const answer = await slots.run(timeoutMs, () => runInChild(job, timeoutMs, opts.signal));
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
    ...(answer.truncatedBy !== undefined ? { truncatedBy: answer.truncatedBy } : {}),
  };
}
