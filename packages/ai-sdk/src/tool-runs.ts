import type { BranchPlace, CheckRequest } from '@offshoot/client';
import {
  type ArgsOf,
  branchOf,
  diffOutput,
  diffRows,
  forkTtl,
  type OutputOf,
  rollbackUndo,
  type ToolCatalogue,
} from '@offshoot/tools';
import type { ForkHeads } from './fork-heads.js';

/** The tools this adapter offers: the agent's branch loop (listing and TTLs are the human's, on the CLI). */
export const AGENT_TOOLS = [
  'offshoot_fork',
  'offshoot_checkout',
  'offshoot_checkpoint',
  'offshoot_diff',
  'offshoot_query',
  'offshoot_rollback',
  'offshoot_promote',
  'offshoot_merge',
  'offshoot_destroy',
] as const;

/** One of the tools this adapter offers. */
export type AgentToolName = (typeof AGENT_TOOLS)[number];

/** How one tool runs here: its arguments, as validated, to one call of the place (a daemon or the CLI at rest). */
export type Run<K extends AgentToolName> = (
  args: ArgsOf<ToolCatalogue[K]['input']>,
  place: BranchPlace,
) => Promise<OutputOf<ToolCatalogue[K]['output']>>;

/** What a surface's options fill in: the fork's default TTL, and whether the human lets the agent force. */
export interface RunOptions {
  defaultTtl: string;
  allowForce: boolean;
}

/**
 * Each tool's run: translate the arguments, make one call, shape offshoot's answer as the catalogue's output. `heads`
 * remembers the head forks made here, whose promote onto their base takes their starting head as `if_head`.
 */
export function toolRuns(opts: RunOptions, heads: ForkHeads): { [K in AgentToolName]: Run<K> } {
  return {
    async offshoot_fork(args, place) {
      const source = branchOf(args.branch);
      const chosen = forkTtl(args.ttl, opts.defaultTtl);
      const more = args.more_branches ?? [];
      const r = await place.fork({
        db: args.database,
        source,
        branch: args.new_branch,
        more,
        at: args.at,
        ttl: chosen.ttl,
        meta: args.meta,
        ...(args.ephemeral === true ? { ephemeral: true } : {}),
      });
      if (args.at === undefined) heads.remember(args.database, source, r.branches, r.txid);
      return {
        db: args.database,
        source,
        branch: args.new_branch,
        ...(more.length > 0 ? { branches: r.branches } : {}),
        txid: r.txid,
        at: args.at ?? null,
        ttl: r.ttl,
        ttl_source: chosen.source,
        expires_at: r.expires_at,
        via: place.mode,
        ...(args.meta !== undefined ? { meta: args.meta } : {}),
        ...(r.ephemeral === true ? { ephemeral: true } : {}),
      };
    },

    async offshoot_checkout(args, place) {
      const branch = branchOf(args.branch);
      const r = await place.checkout(args.database, branch);
      return {
        db: args.database,
        branch,
        path: r.path,
        txid: r.txid ?? null,
        live: r.live,
        reused: r.reused ?? false,
        dirty: r.dirty ?? false,
        kept: r.kept ?? null,
      };
    },

    async offshoot_checkpoint(args, place) {
      const branch = branchOf(args.branch);
      const r = await place.checkpoint(args.database, branch, args.name, args.meta);
      return {
        db: args.database,
        branch,
        name: args.name,
        txid: r.txid,
        kind: r.kind,
        live: r.kind === 'live',
        ...(args.meta !== undefined ? { meta: args.meta } : {}),
      };
    },

    async offshoot_diff(args, place) {
      const side = (branch: string, at: string | undefined) =>
        `${args.database}@${branch}${at === undefined ? '' : `@${at}`}`;
      const left = side(branchOf(args.source), args.source_at);
      const right = side(args.target, args.target_at);
      const limit = diffRows(args.limit);
      return diffOutput(left, right, await place.diff(left, right, { summary: args.summary ?? false, limit }));
    },

    async offshoot_query(args, place) {
      const branch = branchOf(args.branch);
      const r = await place.query(args.database, branch, args.sql, {
        ...(args.at !== undefined ? { at: args.at } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
      });
      const { source, columns, rows, truncated } = r;
      return { db: args.database, branch, at: args.at ?? null, source, columns, rows, truncated };
    },

    async offshoot_rollback(args, place) {
      const branch = branchOf(args.branch);
      const r = await place.rollback(args.database, branch, args.to);
      const isProtected = r.protected ?? false;
      const { undo } = rollbackUndo({
        db: args.database,
        branch,
        backup: r.backup,
        protected: isProtected,
        allowForce: opts.allowForce,
      });
      return {
        db: args.database,
        branch,
        to: args.to,
        txid: r.txid,
        backup: r.backup,
        ...(r.earlier_backup !== undefined ? { earlier_backup: r.earlier_backup } : {}),
        abandoned: r.abandoned,
        path: r.checkout,
        refreshed: r.refreshed,
        protected: isProtected,
        undo,
      };
    },

    async offshoot_promote(args, place) {
      const ifHead = heads.ifHead(args.database, args.source, args.target, args.if_head);
      const r = await place.promote(args.database, args.source, args.target, { force: args.force ?? false, ifHead });
      return {
        db: args.database,
        source: args.source,
        target: args.target,
        txid: r.txid,
        backup: r.backup,
        ...(r.earlier_backup !== undefined ? { earlier_backup: r.earlier_backup } : {}),
        if_head: ifHead ?? null,
        path: r.checkout,
        refreshed: r.refreshed,
        source_live: r.source_live,
      };
    },

    async offshoot_merge(args, place) {
      // The place answers the merge's JSON (mergeToJson's shape) and what the op warned of: the tool gives the former.
      const { warnings: _, ...merged } = await place.merge(args.database, args.source, args.target, {
        at: args.at,
        force: args.force ?? false,
        prefer: args.prefer,
        resolved: args.resolved,
        name: args.name,
      });
      return merged;
    },

    async offshoot_destroy(args, place) {
      const r = await place.destroy(args.database, args.branch, { force: args.force ?? false });
      return {
        db: args.database,
        branch: args.branch,
        removed_checkout: r.removed_checkout,
        ...(r.discarded !== undefined ? { discarded: r.discarded } : {}),
      };
    },
  };
}

/** The check of each call the human may be asked about: the same call (its `if_head` as the run sends it), as `check` names it. */
export function toolChecks(heads: ForkHeads): {
  [K in AgentToolName]?: (args: ArgsOf<ToolCatalogue[K]['input']>) => CheckRequest;
} {
  return {
    offshoot_rollback: (a) => ({ verb: 'rollback', db: a.database, branch: branchOf(a.branch), to: a.to }),
    offshoot_promote: (a) => ({
      verb: 'promote',
      db: a.database,
      source: a.source,
      onto: a.target,
      force: a.force ?? false,
      ifHead: heads.ifHead(a.database, a.source, a.target, a.if_head),
    }),
    offshoot_merge: (a) => ({
      verb: 'merge',
      db: a.database,
      source: a.source,
      into: a.target,
      force: a.force ?? false,
      at: a.at,
    }),
    offshoot_destroy: (a) => ({ verb: 'destroy', db: a.database, branch: a.branch, force: a.force ?? false }),
  };
}
