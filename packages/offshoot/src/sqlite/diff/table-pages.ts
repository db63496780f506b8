import type { SqliteDatabase } from '../sqlite-database.js';
import { mapBtreePagesOnce } from './btree-seek.js';
import type { RawDbFile } from './btree-walk.js';
import type { DiffStats } from './diff-types.js';
import type { SchemaCatalog } from './schema-catalog.js';

const SCHEMA_ROOT = 1;

/**
 * Names the tables that own any of the given pages on this side. An index page stands for its table. Pages of
 * sqlite_schema (page 1 included: the schema is always compared), or past the end of the file belong to no table,
 * and neither do pages of ignoredIndexes. With `raw` (this side's file open for raw reads), each changed page is placed
 * by a descent of its b-tree (or a walk of the interior pages), so the cost follows the changed pages rather than
 * the file's size; a changed page that walk
 * cannot place (an overflow, freelist or pointer-map page) makes this side fall back to the dbstat virtual table,
 * which reads every b-tree page and does place overflow pages. `stats.pagesRead` counts the pages either way read.
 */
export function tablesOwningPages(
  db: SqliteDatabase,
  catalog: SchemaCatalog,
  pages: ReadonlySet<number>,
  ignoredIndexes: ReadonlySet<string>,
  raw: RawDbFile | undefined,
  stats: DiffStats,
): Set<string> {
  const owners = new Set<string>();
  if (pages.size === 0) return owners;
  const names =
    (raw !== undefined ? walkedOwners(raw, catalog, pages, stats) : undefined) ?? dbstatOwners(db, pages, stats);
  for (const name of names) {
    if (name === 'sqlite_schema' || name === 'sqlite_master' || ignoredIndexes.has(name)) continue;
    owners.add(catalog.indexTable.get(name) ?? name);
  }
  return owners;
}

/** Owners of the pages from the interior-page walk; undefined when some changed page is not a b-tree page it reached. */
function walkedOwners(
  raw: RawDbFile,
  catalog: SchemaCatalog,
  pages: ReadonlySet<number>,
  stats: DiffStats,
): Set<string> | undefined {
  const roots = new Map<number, string>([[SCHEMA_ROOT, 'sqlite_schema']]);
  for (const [name, root] of catalog.rootpages) roots.set(root, name);
  const owners = mapBtreePagesOnce(raw, roots, (n) => {
    stats.pagesRead += n;
  });
  const names = new Set<string>();
  for (const pgno of pages) {
    if (pgno === SCHEMA_ROOT || pgno > raw.pageCount) continue;
    const owner = owners.get(pgno);
    if (owner === undefined) return undefined;
    names.add(owner);
  }
  return names;
}

/** Owners of the pages from dbstat (Node's SQLite is built with SQLITE_ENABLE_DBSTAT_VTAB), one pass over every page. */
function dbstatOwners(db: SqliteDatabase, pages: ReadonlySet<number>, stats: DiffStats): string[] {
  stats.pagesRead += Number(db.pragma('page_count', { simple: true }));
  const rows = db
    .prepare('SELECT DISTINCT name FROM dbstat WHERE pageno IN (SELECT value FROM json_each(?))')
    .all(JSON.stringify([...pages])) as Array<{ name: string }>;
  return rows.map((r) => r.name);
}
