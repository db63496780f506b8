import type { Connection } from '../sqlite/connection.js';
import type { Target } from '../core/target.js';
import { diffDatabases } from '../sqlite/diff/diff-databases.js';
import type { DiffResult } from '../sqlite/diff/diff-types.js';
import type { RowWindows } from '../sqlite/diff/row-window.js';
import { ChainResolver, type ResolvedChain } from '../store/chain-resolver.js';
import type { OpsContext } from './helpers/context/context.js';
import { explainDamage } from './helpers/context/damaged-object.js';
import { chainId } from './helpers/chain/materialize.js';
import { keptEntry } from './helpers/chain/kept-entries.js';
import { readBranch } from './helpers/branch/branch-ref.js';
import { changedPagesBetween } from './helpers/chain/changed-pages.js';
import { isHead, resolvePoint } from './helpers/history/point.js';
import { readCleanCheckout } from './helpers/checkout/clean-checkout-read.js';
import { keptSideOf } from '../sqlite/diff/kept-side.js';

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
  /**
   * Which row changes of each table to keep, by kind (firstRows(n): the first n); the rest are counted, not kept, so
   * the cap bounds what is returned, not what is compared. Every row change when absent.
   */
  rows?: RowWindows;
  /** For SQL rendering, which needs every row (no `rows`): TOO_LARGE then names only what narrows SQL. */
  forSql?: boolean;
}

/** One side of a diff: a file holding the target's durable state, held until release. */
interface DiffSide {
  path: string;
  commit: number;
  chain: ResolvedChain;
  /** A frozen checkout's connection, already holding the state still: the diff reads through it. */
  db?: Connection;
  /** The frozen checkout's raw descriptor, opened after that connection: page reads go through it. */
  fd?: number;
  release: () => void;
}

/**
 * The file a diff reads for one target: the branch's own checkout when it provably holds exactly that state (a head,
 * or a checkpoint at the head, whose checkout is clean), read in place and frozen; else the per-chain cache entry.
 */
async function diffSide(ctx: OpsContext, t: Target, resolver: ChainResolver): Promise<DiffSide> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  const p =
    t.checkpoint !== undefined
      ? await resolvePoint(ctx, t, ref, t.checkpoint)
      : { lineage: ref.lineage, txid: ref.head_txid };
  const chain = await resolver.resolve(p.lineage, p.txid);
  if (isHead(p, ref)) {
    const co = await readCleanCheckout(ctx, t.db, t.branch, ref);
    if (co) return { path: co.path, commit: co.commit, chain, db: co.db, fd: co.fd, release: co.release };
  }
  const entry = await explainDamage(ctx, t, () => keptEntry(ctx, t.db, chain));
  return { path: entry.path, commit: entry.commit, chain, release: () => undefined };
}

/**
 * `offshoot diff <L> <R>`: a native row-level diff of two durable states (heads or checkpoints, possibly of
 * different databases), read with no lease — safe next to live sessions — from the immutable per-chain cache, or
 * from a branch's clean checkout in place (nothing copied: a fork whose session closed is diffed as it stands).
 * Forks that share history compare only the tables owning the pages their chains changed; what the diff reads of the
 * left side (its cache entry, schema, table shapes, row counts, page placements) is kept per unchanged file, so many
 * forks diffed against one seed read the seed once.
 */
export async function diff(
  ctx: OpsContext,
  left: Target,
  right: Target,
  opts: DiffOpOptions = {},
): Promise<DiffResult> {
  // By key alone: a diff reads its chains' pages and page indexes by key, never their sizes.
  const resolver = new ChainResolver(ctx.store, { sizes: false });
  const l = await diffSide(ctx, left, resolver);
  try {
    const r = await diffSide(ctx, right, resolver);
    try {
      const changedPages =
        left.db === right.db ? await changedPagesBetween(ctx, l.chain, r.chain, [l.commit, r.commit]) : undefined;
      return diffDatabases(l.path, r.path, {
        changedPages,
        summaryOnly: opts.summaryOnly ?? false,
        tables: opts.tables,
        maxBytes: opts.maxBytes ?? DIFF_MAX_BYTES,
        rows: opts.rows,
        forSql: opts.forSql,
        leftKept: keptSideOf(l.path, chainId(l.chain.members)),
        connections: { left: l.db, right: r.db },
        files: { left: l.fd, right: r.fd },
      });
    } finally {
      r.release();
    }
  } finally {
    l.release();
  }
}
