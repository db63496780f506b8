import type Database from 'better-sqlite3';
import type { SchemaCatalog } from './schema-catalog.js';

/**
 * Names the tables that own any of the given pages on this side, via the dbstat virtual table (better-sqlite3's
 * SQLite is built with SQLITE_ENABLE_DBSTAT_VTAB). An index page stands for its table. Pages of sqlite_schema,
 * the freelist, or past the end of the file belong to no table, and neither do pages of ignoredIndexes. dbstat walks every b-tree page once: a sequential
 * read of the file, far cheaper than reading and comparing rows.
 */
export function tablesOwningPages(
  db: Database.Database,
  catalog: SchemaCatalog,
  pages: ReadonlySet<number>,
  ignoredIndexes: ReadonlySet<string>,
): Set<string> {
  const owners = new Set<string>();
  if (pages.size === 0) return owners;
  const rows = db
    .prepare('SELECT DISTINCT name FROM dbstat WHERE pageno IN (SELECT value FROM json_each(?))')
    .all(JSON.stringify([...pages])) as Array<{ name: string }>;
  for (const { name } of rows) {
    if (name === 'sqlite_schema' || name === 'sqlite_master' || ignoredIndexes.has(name)) continue;
    owners.add(catalog.indexTable.get(name) ?? name);
  }
  return owners;
}
