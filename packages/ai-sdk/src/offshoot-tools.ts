import type { Client } from '@offshoot/client';
import { type Tool, tool } from 'ai';
import type { z } from 'zod';
import { AtRestVerbs } from './at-rest-verbs.js';
import { DaemonVerbs } from './daemon-verbs.js';
import type { BranchVerbs } from './branch-verbs.js';
import { capDiffRows, DIFF_ROWS } from './diff-rows.js';
import * as S from './tool-schemas.js';
import { asTool } from './model-error.js';

/** Where the tools act: a daemon through its client, or a store at rest through the `offshoot` CLI. */
export type OffshootTarget =
  | {
      /** A connected daemon client (`connect(socket)`); the caller closes it. */
      client: Client;
    }
  | {
      /** The store (a path or `s3://bucket/prefix`), driven by the `offshoot` CLI with no daemon. */
      store: string;
      /** The offshoot binary; default OFFSHOOT_BIN, else `offshoot` on PATH. */
      bin?: string;
    };

/** Options of `offshootTools`. */
export type OffshootToolsOptions = OffshootTarget & {
  /** The TTL a fork gets when the model names none, as the MCP server's `-default-ttl`; `none` for no TTL. Default `24h`. */
  defaultTtl?: string;
  /**
   * The human allows the agent to force (a protected target, a live lease), like `offshoot mcp -allow-force`. It is
   * passed to offshoot with every call; offshoot, not this package, decides what it permits. Default false.
   */
  allowForce?: boolean;
};

function verbsFor(opts: OffshootToolsOptions, allowForce: boolean): BranchVerbs {
  if ('client' in opts) return new DaemonVerbs(opts.client, allowForce);
  return new AtRestVerbs({ store: opts.store, ...(opts.bin !== undefined ? { bin: opts.bin } : {}) }, allowForce);
}

/**
 * The offshoot branch loop as AI SDK tools (`offshoot_fork`, `_checkout`, `_checkpoint`, `_diff`, `_query`,
 * `_rollback`, `_promote`, `_destroy`), each one call of the daemon client or one run of the CLI at rest, with input
 * and output schemas. Promote, destroy and the rollback of a protected branch need the human's approval
 * (`needsApproval`); every mutation tells offshoot that an agent asks, so it applies the MCP server's safety rules.
 * A failure is the client's OffshootError (code, hint), never retried.
 */
export function offshootTools(options: OffshootToolsOptions): OffshootTools {
  const allowForce = options.allowForce ?? false;
  const defaultTtl = options.defaultTtl ?? '24h';
  const verbs = verbsFor(options, allowForce);
  // Head forks these tools made, by `db@branch`: the base and the head it was forked at. A promote of one onto its
  // base goes ahead only while the base is still at that head (compare-and-swap), so it never replaces work
  // someone else promoted or checkpointed there meanwhile.
  const forkedAt = new Map<string, { base: string; head: number }>();

  return {
    offshoot_fork: tool({
      description: [
        'Fork a branch (default main) into a new copy-on-write branch: a real, private database for one attempt, made',
        'in milliseconds at any size. Fork BEFORE any schema migration, bulk delete, backfill or data experiment, then',
        "work in the fork's file (offshoot_checkout), never in main's. The fork expires after its TTL unless touched;",
        '`at` forks from a checkpoint instead of the head.',
      ].join(' '),
      inputSchema: S.forkInput(defaultTtl),
      outputSchema: S.forkOutput,
      execute: (input) =>
        asTool(async () => {
          const source = S.branchOrMain(input.branch);
          const wanted = input.ttl ?? defaultTtl;
          const ttl = wanted === 'none' ? undefined : wanted;
          const txid = await verbs.fork({
            db: input.database,
            source,
            branch: input.new_branch,
            at: input.at,
            ttl,
            meta: input.meta,
          });
          if (input.at === undefined)
            forkedAt.set(`${input.database}@${input.new_branch}`, { base: source, head: txid });
          return { db: input.database, source, branch: input.new_branch, txid, at: input.at ?? null, ttl: ttl ?? null };
        }),
    }),

    offshoot_checkout: tool({
      description: [
        "Return the path of a branch's writable SQLite file, to open with any SQLite client. Work in a fork's file,",
        "never in main's. With a daemon session open on the branch the path is live (writes are captured as they",
        'commit); otherwise the file is at rest and what you write is kept only when you call offshoot_checkpoint.',
      ].join(' '),
      inputSchema: S.checkoutInput,
      outputSchema: S.checkoutOutput,
      execute: (input) =>
        asTool(async () => {
          const branch = S.branchOrMain(input.branch);
          const file = await verbs.checkout(input.database, branch);
          return { db: input.database, branch, path: file.path, live: file.live };
        }),
    }),

    offshoot_checkpoint: tool({
      description: [
        "Record the branch's current state as a named checkpoint, durably. Checkpoint when tests pass (or before the",
        'next risky step), so offshoot_rollback can return here if a later step fails. `meta` tags the checkpoint.',
      ].join(' '),
      inputSchema: S.checkpointInput,
      outputSchema: S.checkpointOutput,
      execute: (input) =>
        asTool(async () => {
          const branch = S.branchOrMain(input.branch);
          const r = await verbs.checkpoint(input.database, branch, input.name, input.meta);
          return { db: input.database, branch, name: input.name, txid: r.txid, kind: r.kind };
        }),
    }),

    offshoot_diff: tool({
      description: [
        'Compare two durable states of a database row by row: a fork against main (what your attempt changed), two',
        'attempts, or a branch against one of its checkpoints. Use it before promoting, to show the human exactly what',
        'would change. Reads checkpointed or flushed state only. Rows per table are capped by `limit`; `summary` gives',
        'counts only. Read-only.',
      ].join(' '),
      inputSchema: S.diffInput,
      outputSchema: S.diffOutput,
      execute: (input) =>
        asTool(async () => {
          const side = (branch: string, at: string | undefined) =>
            `${input.database}@${branch}${at === undefined ? '' : `@${at}`}`;
          const left = side(S.branchOrMain(input.source), input.source_at);
          const right = side(input.target, input.target_at);
          const summary = input.summary ?? false;
          const d = await verbs.diff(left, right, summary);
          const { tables, truncated } = capDiffRows(d.tables, input.limit ?? DIFF_ROWS.default);
          return { left, right, schema: d.schema, tables, truncated, summary_only: summary };
        }),
    }),

    offshoot_query: tool({
      description: [
        'Run one read-only SQL statement (SELECT, WITH, EXPLAIN, a reporting PRAGMA) against a branch or one of its',
        "checkpoints: look before you touch, or inspect a fork after a migration. The head reads the branch's file",
        'when it has one (so your unsaved writes show); `at` reads a checkpoint. Writes are refused; at most `limit`',
        'rows (default 100, at most 1000).',
      ].join(' '),
      inputSchema: S.queryInput,
      outputSchema: S.queryOutput,
      execute: (input) =>
        asTool(async () => {
          const branch = S.branchOrMain(input.branch);
          const r = await verbs.query(input.database, branch, input.sql, input.at, input.limit);
          return {
            db: input.database,
            branch,
            at: input.at ?? null,
            source: r.source,
            columns: r.columns,
            rows: r.rows,
            truncated: r.truncated,
          };
        }),
    }),

    offshoot_rollback: tool({
      description: [
        'Return a branch to one of its checkpoints when tests fail or an attempt went wrong: later checkpoints are',
        "dropped and the branch's file is refreshed; the previous head is kept as '<branch>-pre-rollback' for a while.",
        'Rolling back a protected branch (main) needs the human: the call waits for their approval.',
      ].join(' '),
      inputSchema: S.rollbackInput,
      outputSchema: S.rollbackOutput,
      // Decided on the branch the call acts on, resolved as offshoot resolves it (the schema refuses an empty name);
      // a failed read asks.
      needsApproval: async (input) => verbs.isProtected(input.database, S.branchOrMain(input.branch)).catch(() => true),
      execute: (input) =>
        asTool(async () => {
          const branch = S.branchOrMain(input.branch);
          const path = await verbs.rollback(input.database, branch, input.to);
          return { db: input.database, branch, to: input.to, path };
        }),
    }),

    offshoot_promote: tool({
      description: [
        "Replace the target branch's content with the source branch's head: promote the fork whose tests passed. The",
        "target's previous head is kept as '<target>-pre-promote'. Needs the human's approval. main is protected: a",
        'promote onto it needs force, which offshoot honours only when the human allowed forcing; on a refusal, tell',
        'the human the exact command instead of retrying. A fork made by offshoot_fork is promoted onto the branch it',
        'came from only while that branch is still at the head it was forked at: BASE_MOVED otherwise (look at what',
        'changed and redo the work on a new fork; do not retry).',
      ].join(' '),
      inputSchema: S.promoteInput,
      outputSchema: S.promoteOutput,
      needsApproval: true,
      execute: (input) =>
        asTool(async () => {
          const made = forkedAt.get(`${input.database}@${input.source}`);
          const ifHead = input.if_head ?? (made?.base === input.target ? made.head : undefined);
          const txid = await verbs.promote(input.database, input.source, input.target, input.force ?? false, ifHead);
          return { db: input.database, source: input.source, target: input.target, txid, if_head: ifHead ?? null };
        }),
    }),

    offshoot_destroy: tool({
      description: [
        "Delete a branch and its file: an attempt you abandoned (forks also expire on their own). Needs the human's",
        'approval. Protected branches (main) and their undo points are refused unless the human allowed forcing; on a',
        'refusal, ask the human instead of retrying. branch has no default.',
      ].join(' '),
      inputSchema: S.destroyInput,
      outputSchema: S.destroyOutput,
      needsApproval: true,
      execute: (input) =>
        asTool(async () => {
          await verbs.destroy(input.database, input.branch, input.force ?? false);
          return { db: input.database, branch: input.branch };
        }),
    }),
  };
}

type ToolOf<I extends z.ZodType, O extends z.ZodType> = Tool<z.infer<I>, z.infer<O>>;

/** The tools `offshootTools` returns, by name (the MCP server's tool names); a type, so it is an AI SDK ToolSet. */
export type OffshootTools = {
  offshoot_fork: ToolOf<ReturnType<typeof S.forkInput>, typeof S.forkOutput>;
  offshoot_checkout: ToolOf<typeof S.checkoutInput, typeof S.checkoutOutput>;
  offshoot_checkpoint: ToolOf<typeof S.checkpointInput, typeof S.checkpointOutput>;
  offshoot_diff: ToolOf<typeof S.diffInput, typeof S.diffOutput>;
  offshoot_query: ToolOf<typeof S.queryInput, typeof S.queryOutput>;
  offshoot_rollback: ToolOf<typeof S.rollbackInput, typeof S.rollbackOutput>;
  offshoot_promote: ToolOf<typeof S.promoteInput, typeof S.promoteOutput>;
  offshoot_destroy: ToolOf<typeof S.destroyInput, typeof S.destroyOutput>;
};
