import type { DataObject } from '../core/keys.js';
import type { Target } from '../core/target.js';
import { LtxDecoder } from '../ltx/decoder.js';
import { diffDatabases } from '../sqlite/diff/diff-databases.js';
import type { DiffResult } from '../sqlite/diff/diff-types.js';
import { ChainResolver, type ResolvedChain } from '../store/chain-resolver.js';
import type { OpsContext } from './helpers/context/context.js';
import { explainDamage } from './helpers/context/damaged-object.js';
import { cachedChain } from './helpers/chain/materialize.js';
import { resolveTargetChain } from './helpers/branch/resolve-target.js';

async function segmentPages(ctx: OpsContext, member: DataObject, into: Set<number>): Promise<void> {
  const dec = new LtxDecoder(await ctx.store.backend.getStream(member.key));
  try {
    for await (const p of dec.pages()) into.add(p.pgno);
  } finally {
    await dec.close();
  }
}

/**
 * The pages that can differ between two chains: the pages of every segment past their common prefix. Undefined
 * (compare everything) when either side diverges through a snapshot, since a snapshot rewrites every page.
 */
export async function changedPagesBetween(
  ctx: OpsContext,
  left: ResolvedChain,
  right: ResolvedChain,
  commits: [number, number],
): Promise<Set<number> | undefined> {
  let common = 0;
  while (
    common < left.members.length &&
    common < right.members.length &&
    left.members[common]?.key === right.members[common]?.key
  )
    common++;
  if (common === 0) return undefined;
  const rest = [...left.members.slice(common), ...right.members.slice(common)];
  if (rest.some((m) => m.kind === 'snapshot')) return undefined;
  const pages = new Set<number>();
  for (const m of rest) await segmentPages(ctx, m, pages);
  // Pages past the shorter file exist on one side only.
  for (let p = Math.min(...commits) + 1; p <= Math.max(...commits); p++) pages.add(p);
  return pages;
}

/** The most row data a diff keeps (by its size as JSON) unless the caller sets its own cap: 256 MiB. */
export const DIFF_MAX_BYTES = 256 << 20;

/**
 * The cap of a diff a long-running server computes for a client (the daemon's diff op, the dashboard): 48 MiB, three
 * quarters of the 64 MiB response line clients read, so no client's request can make the server hold more.
 */
export const DIFF_SERVER_BYTES = 48 << 20;

/** Options of diff. */
export interface DiffOpOptions {
  /** Statuses and counts only, no rows. */
  summaryOnly?: boolean;
  /** Only these tables (and the schema changes of them, their indexes and triggers). */
  tables?: readonly string[];
  /** Cap on the row data kept, by its size as JSON (default DIFF_MAX_BYTES); past it the diff fails TOO_LARGE. */
  maxBytes?: number;
}

/**
 * `offshoot diff <L> <R>`: a native row-level diff of two durable states (heads or checkpoints, possibly of
 * different databases), read from the immutable per-chain cache with no lease — safe next to live sessions. Forks
 * that share history compare only the tables owning the pages their chains changed.
 */
export async function diff(
  ctx: OpsContext,
  left: Target,
  right: Target,
  opts: DiffOpOptions = {},
): Promise<DiffResult> {
  const resolver = new ChainResolver(ctx.store);
  const [lc, rc] = await Promise.all([
    resolveTargetChain(ctx, left, resolver),
    resolveTargetChain(ctx, right, resolver),
  ]);
  const l = await explainDamage(ctx, left, () => cachedChain(ctx, left.db, lc));
  const r = await explainDamage(ctx, right, () => cachedChain(ctx, right.db, rc));
  const changedPages =
    left.db === right.db ? await changedPagesBetween(ctx, lc, rc, [l.result.commit, r.result.commit]) : undefined;
  return diffDatabases(l.path, r.path, {
    changedPages,
    summaryOnly: opts.summaryOnly ?? false,
    tables: opts.tables,
    maxBytes: opts.maxBytes ?? DIFF_MAX_BYTES,
  });
}
