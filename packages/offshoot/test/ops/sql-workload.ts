// Random but deterministic SQL (inserts, bulk inserts, updates, deletes, DDL, VACUUM) for a database whose schema
// is read from the model's private copy. Every statement's effect depends only on the database content, so running
// it on the checkout and on the model copy must give the same `.dump`. Tables always have an INTEGER PRIMARY KEY,
// so row ids survive `.dump` and VACUUM.
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import type { Prng } from './prng.js';

interface Schema {
  tables: string[];
  indexes: string[];
  columns: Map<string, string[]>;
}

function readSchema(file: string): Schema {
  const db = openDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const tables = (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .all() as Array<{ name: string }>
    ).map((r) => r.name);
    const indexes = (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        .all() as Array<{ name: string }>
    ).map((r) => r.name);
    const columns = new Map<string, string[]>();
    for (const t of tables)
      columns.set(
        t,
        (db.prepare(`SELECT name FROM pragma_table_info('${t}')`).all() as Array<{ name: string }>).map((r) => r.name),
      );
    return { tables, indexes, columns };
  } finally {
    db.close();
  }
}

function word(rng: Prng): string {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'so', 'tu', 'ra', 'vi', 'zo', 'pe'];
  let s = '';
  for (let i = rng.int(1, 4); i > 0; i--) s += rng.pick(syllables);
  return s;
}

function freshName(rng: Prng, prefix: string, taken: readonly string[]): string {
  for (;;) {
    const name = `${prefix}${rng.int(1, 999)}`;
    if (!taken.includes(name)) return name;
  }
}

const DML = { insert: 5, bulk: 3, update: 4, delete: 3 };
const ANY = { ...DML, create: 1, addColumn: 1, index: 1, dropIndex: 1, dropTable: 0.4, vacuum: 0.8 };

function statement(rng: Prng, s: Schema, dmlOnly: boolean): string {
  if (s.tables.length === 0)
    return `CREATE TABLE ${freshName(rng, 't', [])}(id INTEGER PRIMARY KEY, v TEXT, n INTEGER);`;
  const t = rng.pick(s.tables);
  const kind = rng.weighted<keyof typeof ANY>(
    dmlOnly ? { ...ANY, create: 0, addColumn: 0, index: 0, dropIndex: 0, dropTable: 0, vacuum: 0 } : ANY,
  );
  switch (kind) {
    case 'insert': {
      const rows = Array.from({ length: rng.int(1, 5) }, () => `('${word(rng)}', ${rng.int(-1000, 1000)})`);
      return `INSERT INTO ${t}(v, n) VALUES ${rows.join(', ')};`;
    }
    case 'bulk': {
      const count = rng.int(20, 200);
      const width = rng.int(10, 200);
      const tag = word(rng);
      return `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${count}) INSERT INTO ${t}(v, n) SELECT printf('%s-%d-%.${width}c', '${tag}', x, '*'), x * ${rng.int(1, 97)} FROM c;`;
    }
    case 'update': {
      const m = rng.int(2, 9);
      return `UPDATE ${t} SET v = v || '${word(rng)}', n = n + ${rng.int(1, 50)} WHERE id % ${m} = ${rng.int(0, m - 1)};`;
    }
    case 'delete': {
      const m = rng.int(2, 9);
      return `DELETE FROM ${t} WHERE id % ${m} = ${rng.int(0, m - 1)};`;
    }
    case 'create':
      return `CREATE TABLE ${freshName(rng, 't', s.tables)}(id INTEGER PRIMARY KEY, v TEXT, n INTEGER);`;
    case 'addColumn': {
      const cols = s.columns.get(t) ?? [];
      return `ALTER TABLE ${t} ADD COLUMN ${freshName(rng, 'c', cols)} TEXT DEFAULT '${word(rng)}';`;
    }
    case 'index':
      return `CREATE INDEX ${freshName(rng, 'i', s.indexes)} ON ${t}(n);`;
    case 'dropIndex':
      return s.indexes.length > 0 ? `DROP INDEX ${rng.pick(s.indexes)};` : `DELETE FROM ${t} WHERE n < 0;`;
    case 'dropTable':
      return `DROP TABLE ${t};`;
    case 'vacuum':
      return 'VACUUM;';
  }
}

/**
 * One random write against the schema in `modelFile`: a single statement of any kind, or (half the time, when
 * tables exist) two to three data changes in one explicit transaction.
 */
export function randomWrite(rng: Prng, modelFile: string): string {
  const s = readSchema(modelFile);
  if (s.tables.length === 0 || rng.chance(0.5)) return statement(rng, s, false);
  const stmts = Array.from({ length: rng.int(2, 3) }, () => statement(rng, s, true));
  return `BEGIN;\n${stmts.join('\n')}\nCOMMIT;`;
}
