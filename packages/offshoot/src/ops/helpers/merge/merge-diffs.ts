import { diffDatabases } from '../../../sqlite/diff/diff-databases.js';
import { openDatabase } from '../../../sqlite/sqlite-driver.js';
import type { DiffResult } from '../../../sqlite/diff/diff-types.js';
import type { ResolvedChain } from '../../../store/chain-resolver.js';
import { changedPagesBetween } from '../chain/changed-pages.js';
import { cachedChain } from '../chain/materialize.js';
import type { OpsContext } from '../context/context.js';

/** The most row data one side's changes may hold in memory (by its size as JSON) before a merge fails TOO_LARGE. */
export const MERGE_MAX_BYTES = 256 << 20;

/**
 * What each side changed since the ancestor: two row diffs (ancestor → source, ancestor → target) of the immutable
 * per-chain cache entries, each narrowed to the tables owning the pages the chains changed past their common prefix,
 * as `offshoot diff` narrows: a merge reads what the two forks wrote, not the whole database.
 */
export async function sideDiffs(
  ctx: OpsContext,
  db: string,
  base: ResolvedChain,
  source: ResolvedChain,
  target: ResolvedChain,
): Promise<{ source: DiffResult; target: DiffResult; declaredKeys: Map<string, string[]> }> {
  const b = await cachedChain(ctx, db, base, `merge base of ${db}`);
  const diffFrom = async (side: ResolvedChain, label: string): Promise<DiffResult> => {
    const entry = await cachedChain(ctx, db, side, label);
    return diffDatabases(b.path, entry.path, {
      changedPages: await changedPagesBetween(ctx, base, side, [b.result.commit, entry.result.commit]),
      maxBytes: MERGE_MAX_BYTES,
      forSql: true,
    });
  };
  const s = await diffFrom(source, `merge source of ${db}`);
  const t = await diffFrom(target, `merge target of ${db}`);
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
