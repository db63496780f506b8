import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';
import { openDatabase } from './sqlite-driver.js';

/** A SELECT list over some expressions, and how to turn one raw row of it back into one value per expression. */
export interface WholeTextSelect {
  /** What goes between SELECT and FROM. */
  list: string;
  /** The expressions' values from one raw row of the list, every TEXT value whole; absent when a raw row is them. */
  values?: (row: unknown[]) => unknown[];
}

let cutsAtNul: boolean | undefined;

/**
 * True when this runtime's node:sqlite ends a TEXT value it reads at the value's first NUL (Node 22 does; 24 and
 * later read the whole value). Found by asking once per process.
 */
export function textCutAtNul(): boolean {
  if (cutsAtNul === undefined) {
    const db = openDatabase(':memory:');
    try {
      cutsAtNul = db.prepare("SELECT CAST(X'610062' AS TEXT)").pluck().get() !== 'a\0b';
    } finally {
      db.close();
    }
  }
  return cutsAtNul;
}

/**
 * A SELECT list that reads every TEXT value of `exprs` whole, NULs included. Where the runtime cuts text at a NUL,
 * each expression is followed by its bytes when it is such a text, and those bytes, decoded in the database's text
 * encoding, replace the cut value; elsewhere the list is the expressions alone and a raw row is their values.
 */
export function wholeTextSelect(db: SqliteDatabase, exprs: readonly string[]): WholeTextSelect {
  if (!textCutAtNul()) return { list: exprs.join(', ') };
  const decode = textDecoder(db.pragma('encoding', { simple: true }) as string);
  const list = exprs
    .map((e) => `${e}, CASE WHEN typeof(${e}) = 'text' AND instr(${e}, char(0)) > 0 THEN CAST(${e} AS BLOB) END`)
    .join(', ');
  return {
    list,
    values: (row) =>
      exprs.map((_, i) => {
        const bytes = row[2 * i + 1];
        return bytes instanceof Uint8Array ? decode(Buffer.from(bytes)) : row[2 * i];
      }),
  };
}

// CAST(text AS BLOB) gives the text's bytes as the database stores them: UTF-8, UTF-16le or UTF-16be.
function textDecoder(encoding: string): (bytes: Buffer) => string {
  if (encoding === 'UTF-16le') return (b) => b.toString('utf16le');
  if (encoding === 'UTF-16be') return (b) => b.swap16().toString('utf16le');
  return (b) => b.toString('utf8');
}

/** The raw rows of a whole-text select list as the expressions' values, closing `rows` when the caller stops early. */
export function wholeTextRows(rows: IterableIterator<unknown[]>, select: WholeTextSelect): IterableIterator<unknown[]> {
  const values = select.values;
  if (values === undefined) return rows;
  return (function* () {
    for (const row of rows) yield values(row);
  })();
}

/** A reading statement over another's rows, and how to turn one raw row of it into the other's values. */
export interface WholeTextReader {
  /** The statement to read the rows from. */
  stmt: SqliteStatement;
  /** The first statement's values from one raw row, every TEXT value whole. */
  values: (row: unknown[]) => unknown[];
}

/**
 * Where the runtime cuts text at a NUL, a statement reading `sql`'s `columns` rows whole: `sql` becomes a CTE that
 * names its columns by position, so duplicate or unnamed result columns still read. Undefined where the runtime
 * reads text whole, or when `sql` cannot stand in a subquery (a PRAGMA, an EXPLAIN); such a statement is read as is.
 */
export function wholeTextReader(db: SqliteDatabase, sql: string, columns: number): WholeTextReader | undefined {
  if (!textCutAtNul() || columns === 0) return undefined;
  const names = Array.from({ length: columns }, (_, i) => `"c${i}"`);
  const select = wholeTextSelect(db, names);
  if (select.values === undefined) return undefined;
  // The newline ends a trailing line comment before the closing parenthesis. The OFFSET keeps SQLite from flattening
  // the CTE into the outer SELECT, which would evaluate each result expression once per reference in the list; as a
  // co-routine it yields each row once, in the statement's order, as it is stepped.
  const body = `SELECT * FROM (${sql.replace(/[\s;]+$/, '')}\n) LIMIT -1 OFFSET 0`;
  try {
    const stmt = db.prepare(
      `WITH "offshoot_query"(${names.join(', ')}) AS (${body}) SELECT ${select.list} FROM "offshoot_query"`,
    );
    return { stmt, values: select.values };
  } catch {
    return undefined;
  }
}
