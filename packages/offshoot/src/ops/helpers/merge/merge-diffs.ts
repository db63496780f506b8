import type { Ref } from '../../../core/ref.js';
import type { Connection } from '../../../sqlite/connection.js';
import { diffDatabases } from '../../../sqlite/diff/diff-databases.js';
import type { DiffResult } from '../../../sqlite/diff/diff-types.js';
import { openDatabase } from '../../../sqlite/sqlite-driver.js';
import { readTableShape } from '../../../sqlite/diff/table-shape.js';
import type { ResolvedChain } from '../../../store/chain-resolver.js';
import { changedPagesBetween } from '../chain/changed-pages.js';
import { cachedChain } from '../chain/materialize.js';
import { readCleanCheckout } from '../checkout/clean-checkout-read.js';
import type { OpsContext } from '../context/context.js';
import type { ResolvableTable } from './resolved-rows.js';

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
 * declared keys of the tables either side changed (see declaredKeys), and the shape of each table in `named` as the
 * merged database will have it (the source's when the source changed the schema, else the target's; undefined for
 * a table it will not have): what a resolved row of it must hold.
 */
export async function sideDiffs(
  ctx: OpsContext,
  db: string,
  base: ResolvedChain,
  source: MergeHead,
  target: MergeHead,
  named: ReadonlySet<string> = new Set(),
): Promise<{
  source: DiffResult;
  target: DiffResult;
  declaredKeys: Map<string, string[]>;
  resolvable: Map<string, ResolvableTable | undefined>;
}> {
  const b = await cachedChain(ctx, db, base, `merge base of ${db}`);
  const diffFrom = async (side: MergeHead) => {
    const f = await headFile(ctx, db, side, `merge of ${db}@${side.branch}`);
    try {
      const diff = diffDatabases(b.path, f.path, {
        changedPages: await changedPagesBetween(ctx, base, side.chain, [b.result.commit, f.commit]),
        maxBytes: MERGE_MAX_BYTES,
        forSql: true,
        connections: { right: f.db },
        files: { right: f.fd },
      });
      return { diff, shapes: named.size > 0 ? resolvableTables(f, named) : new Map() };
    } finally {
      f.release();
    }
  };
  const s = await diffFrom(source);
  const t = await diffFrom(target);
  const tables = new Set(
    [...s.diff.tables, ...t.diff.tables].filter((x) => x.status === 'changed').map((x) => x.table),
  );
  return {
    source: s.diff,
    target: t.diff,
    declaredKeys: declaredKeys(b.path, tables),
    resolvable: s.diff.schema.length > 0 ? s.shapes : t.shapes,
  };
}

/**
 * Each table of `named` as a resolved row names it: matched by its declared key (a rowid table by its PRIMARY KEY,
 * as a merge matches it), every stored column but a rowid alias; undefined for a table the file does not have.
 */
function resolvableTables(f: HeadFile, named: ReadonlySet<string>): Map<string, ResolvableTable | undefined> {
  const out = new Map<string, ResolvableTable | undefined>();
  const conn = f.db ?? openDatabase(f.path, { readonly: true });
  try {
    const exists = conn.prepare(
      "SELECT 1 FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name = ?",
    );
    const pk = conn.prepare('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk').pluck();
    for (const t of named) {
      if (exists.get(t) === undefined || t === 'sqlite_sequence') {
        out.set(t, undefined);
        continue;
      }
      const shape = readTableShape(conn, t);
      const rowid = shape.keyKind.startsWith('rowid:');
      out.set(t, {
        key: rowid ? (pk.all(t) as string[]) : shape.key,
        columns: rowid ? shape.columns.slice(1) : shape.columns,
      });
    }
  } finally {
    if (f.db === undefined) conn.close();
  }
  return out;
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
