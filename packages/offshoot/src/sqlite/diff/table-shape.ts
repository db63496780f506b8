import type { SqliteDatabase } from '../sqlite-database.js';
import { fail } from '../../core/errors.js';

/** The columns and key a table's rows are read and matched by. */
export interface TableShape {
  /** Stored, non-generated columns in declaration order, preceded by the rowid alias when the key is the rowid. */
  columns: string[];
  /** Key columns: the PRIMARY KEY of a WITHOUT ROWID table, the INTEGER PRIMARY KEY, or a rowid alias. */
  key: string[];
  /** Declared type and DEFAULT expression (SQL text, or null) of each stored column. */
  declared: Map<string, { type: string; dflt: string | null }>;
  /** Stable fingerprint of how rows are keyed, so sides can tell whether they match rows the same way. */
  keyKind: string;
}

const ROWID_ALIASES = ['rowid', '_rowid_', 'oid'];

/** Reads a table's shape from PRAGMA table_xinfo, table_list and index_list. */
export function readTableShape(db: SqliteDatabase, table: string): TableShape {
  const cols = db
    .prepare('SELECT name, type, pk, hidden, dflt_value AS dflt FROM pragma_table_xinfo(?)')
    .all(table) as Array<{
    name: string;
    type: string;
    pk: bigint;
    hidden: bigint;
    dflt: string | null;
  }>;
  const listed = db.prepare("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?").get(table) as
    | { wr: bigint }
    | undefined;
  const withoutRowid = listed !== undefined && listed.wr !== 0n;
  const columns = cols.filter((c) => c.hidden === 0n).map((c) => c.name);
  const declared = new Map(cols.filter((c) => c.hidden === 0n).map((c) => [c.name, { type: c.type, dflt: c.dflt }]));
  // sqlite_sequence has no key of its own; its rows are identified by table name, and rowids there carry no meaning.
  if (table === 'sqlite_sequence') return { columns, key: ['name'], declared, keyKind: 'pk:name' };
  const pk = cols
    .filter((c) => c.pk > 0n)
    .sort((a, b) => Number(a.pk - b.pk))
    .map((c) => c.name);
  if (withoutRowid) return { columns, key: pk, declared, keyKind: `pk:${pk.join(',')}` };
  const pkIndex = db.prepare("SELECT 1 FROM pragma_index_list(?) WHERE origin = 'pk'").get(table);
  const ipk = pk.length === 1 && pkIndex === undefined ? pk[0] : undefined;
  if (ipk !== undefined) return { columns, key: [ipk], declared, keyKind: `ipk:${ipk}` };
  const names = new Set(cols.map((c) => c.name.toLowerCase()));
  const alias = ROWID_ALIASES.find((a) => !names.has(a));
  if (alias === undefined) {
    throw fail(
      'UNSUPPORTED',
      `diff: table ${table} has columns named rowid, _rowid_ and oid, so its rows cannot be matched`,
      {
        hint: 'rename one of those columns, or give the table an INTEGER PRIMARY KEY',
      },
    );
  }
  return { columns: [alias, ...columns], key: [alias], declared, keyKind: `rowid:${alias}` };
}
