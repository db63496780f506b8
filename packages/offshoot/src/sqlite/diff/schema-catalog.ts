import type { SqliteDatabase } from '../sqlite-database.js';
import type { SchemaObjectType } from './diff-types.js';

/** One sqlite_schema entry that carries DDL (autoindexes have none and are part of their table). */
export interface SchemaObject {
  type: SchemaObjectType;
  name: string;
  tblName: string;
  sql: string;
  rootpage: number;
}

/** What kind of table a name is, as PRAGMA table_list reports it. */
export type TableKind = 'table' | 'virtual' | 'shadow';

/** One side's schema: its DDL objects in sqlite_schema order, and the kind of each table. */
export interface SchemaCatalog {
  objects: SchemaObject[];
  /** Keyed by `type:name`. */
  byKey: Map<string, SchemaObject>;
  /** Every table (including sqlite_sequence) by name, with its kind. */
  tables: Map<string, TableKind>;
  /** Root page of every b-tree (tables and indexes, autoindexes included) by name. */
  rootpages: Map<string, number>;
  /** Owning table of every index (autoindexes included) by index name. */
  indexTable: Map<string, string>;
}

/** The key a schema object is matched by across sides. */
export function objectKey(type: string, name: string): string {
  return `${type}:${name}`;
}

/** Statistics tables hold planner data, not content: ANALYZE owns them, so diffs ignore them. */
export function isStatTable(name: string): boolean {
  return /^sqlite_stat\d$/i.test(name);
}

/** Reads one side's schema (cheap: sqlite_schema and PRAGMA table_list, no table data). */
export function readCatalog(db: SqliteDatabase): SchemaCatalog {
  const rows = db
    .prepare('SELECT type, name, tbl_name AS tblName, sql, rootpage FROM sqlite_schema ORDER BY rowid')
    .all() as Array<{ type: string; name: string; tblName: string; sql: string | null; rootpage: bigint | null }>;
  const kinds = db.prepare("SELECT name, type FROM pragma_table_list WHERE schema = 'main'").all() as Array<{
    name: string;
    type: string;
  }>;
  const tables = new Map<string, TableKind>();
  for (const k of kinds) {
    if (k.type === 'table' || k.type === 'virtual' || k.type === 'shadow') tables.set(k.name, k.type);
  }
  const catalog: SchemaCatalog = { objects: [], byKey: new Map(), tables, rootpages: new Map(), indexTable: new Map() };
  for (const r of rows) {
    if (r.rootpage !== null && r.rootpage > 0n) catalog.rootpages.set(r.name, Number(r.rootpage));
    if (r.type === 'index') catalog.indexTable.set(r.name, r.tblName);
    if (r.sql === null || !isSchemaType(r.type) || r.name.toLowerCase().startsWith('sqlite_')) continue;
    if (r.type === 'table' && tables.get(r.name) === 'shadow') continue;
    const obj: SchemaObject = {
      type: r.type,
      name: r.name,
      tblName: r.tblName,
      sql: r.sql,
      rootpage: Number(r.rootpage ?? 0n),
    };
    catalog.objects.push(obj);
    catalog.byKey.set(objectKey(obj.type, obj.name), obj);
  }
  return catalog;
}

function isSchemaType(t: string): t is SchemaObjectType {
  return t === 'table' || t === 'index' || t === 'view' || t === 'trigger';
}
