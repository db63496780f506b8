import type { Ref } from '../../../core/ref.js';
import type { Connection } from '../../../sqlite/connection.js';
import { diffDatabases } from '../../../sqlite/diff/diff-databases.js';
import type { DiffResult } from '../../../sqlite/diff/diff-types.js';
import { openDatabase } from '../../../sqlite/sqlite-driver.js';
import type { ResolvedChain } from '../../../store/chain-resolver.js';
import { changedPagesBetween } from '../chain/changed-pages.js';
import { cachedChain } from '../chain/materialize.js';
import { readCleanCheckout } from '../checkout/clean-checkout-read.js';
import type { OpsContext } from '../context/context.js';

/** The most row data one side's changes may hold in memory (by its size as JSON) before a merge fails TOO_LARGE. */
export const MERGE_MAX_BYTES = 256 << 20;

/** A side of a merge: a branch at its head, and whether the caller holds its lease (the target's). */
export interface MergeHead {
  branch: string;
  ref: Ref;
  chain: ResolvedChain;
  leased: boolean;
}

/** The file a diff reads for one head, held until release. */
interface HeadFile {
  path: string;
  commit: number;
  db?: Connection;
  /** The frozen checkout's raw descriptor, opened after that connection: page reads go through it. */
  fd?: number;
  release: () => void;
}

/**
 * The file holding a head: the branch's own checkout when it provably holds exactly that head (read in place and
 * frozen, as `offshoot diff` reads it: nothing copied), else the per-chain cache entry.
 */
async function headFile(ctx: OpsContext, db: string, h: MergeHead, label: string): Promise<HeadFile> {
  const co = await readCleanCheckout(ctx, db, h.branch, h.ref, h.leased);
  if (co) return { path: co.path, commit: co.commit, db: co.db, fd: co.fd, release: co.release };
  const entry = await cachedChain(ctx, db, h.chain, label);
  return { path: entry.path, commit: entry.result.commit, release: () => undefined };
}

/**
 * What each side changed since the ancestor: two row diffs (ancestor → source, ancestor → target), each narrowed to
 * the tables owning the pages the chains changed past their common prefix, as `offshoot diff` narrows, and reading a
 * clean checkout in place as it does: a merge reads what the two forks wrote, not the whole database. Also the
 * declared keys of the tables either side changed (see declaredKeys).
 */
export async function sideDiffs(
  ctx: OpsContext,
  db: string,
  base: ResolvedChain,
  source: MergeHead,
  target: MergeHead,
): Promise<{ source: DiffResult; target: DiffResult; declaredKeys: Map<string, string[]> }> {
  const b = await cachedChain(ctx, db, base, `merge base of ${db}`);
  const diffFrom = async (side: MergeHead): Promise<DiffResult> => {
    const f = await headFile(ctx, db, side, `merge of ${db}@${side.branch}`);
    try {
      return diffDatabases(b.path, f.path, {
        changedPages: await changedPagesBetween(ctx, base, side.chain, [b.result.commit, f.commit]),
        maxBytes: MERGE_MAX_BYTES,
        forSql: true,
        connections: { right: f.db },
        files: { right: f.fd },
      });
    } finally {
      f.release();
    }
  };
  const s = await diffFrom(source);
  const t = await diffFrom(target);
  const tables = new Set([...s.tables, ...t.tables].filter((x) => x.status === 'changed').map((x) => x.table));
  return { source: s, target: t, declaredKeys: declaredKeys(b.path, tables) };
}

/**
 * The declared PRIMARY KEY columns of each table, as the ancestor has them (empty for none). A rowid table's diff
 * matches rows by rowid; a merge matches them by this key, which is their identity in both databases.
 */
function declaredKeys(path: string, tables: ReadonlySet<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const conn = openDatabase(path, { readonly: true });
  try {
    const pk = conn.prepare('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk').pluck();
    for (const t of tables) out.set(t, pk.all(t) as string[]);
  } finally {
    conn.close();
  }
  return out;
}
