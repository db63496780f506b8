import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import type { SqliteDatabase } from '../../src/sqlite/sqlite-database.js';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { renderDiffSql } from '../../src/sqlite/diff/diff-sql.js';
import { quoteIdent, sqlLiteral } from '../../src/sqlite/diff/sql-literal.js';
import { wholeTextSelect } from '../../src/sqlite/whole-text.js';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
function fresh(name: string): string {
  n++;
  return path.join(dir, `${name}${n}.db`);
}

/** Sorted .dump lines: the same set of rows and DDL, independent of the order objects were created in. */
function dump(file: string): string[] {
  return execFileSync('sqlite3', [file, '.dump'], { encoding: 'utf8' }).split('\n').sort();
}

/** Applies renderDiffSql(L→R) to a copy of L with the sqlite3 CLI and checks the copy now equals R. */
function assertRoundTrip(left: string, right: string): string {
  const sql = renderDiffSql(diffDatabases(left, right));
  const copy = fresh('applied');
  fs.copyFileSync(left, copy);
  // The copy is throwaway: skipping fsync keeps the test fast on a busy disk without changing what is applied.
  execFileSync('sqlite3', ['-bail', '-cmd', 'PRAGMA synchronous = OFF', copy], { input: sql, encoding: 'utf8' });
  assert.deepEqual(dump(copy), dump(right));
  assert.equal(renderDiffSql(diffDatabases(copy, right)), '', 'the applied copy diffs as identical, rowids included');
  return sql;
}

function build(setup: string, change: string): [string, string] {
  const left = fresh('l');
  const right = fresh('r');
  const db = openDatabase(left);
  db.pragma('synchronous = OFF');
  db.exec(setup);
  db.close();
  fs.copyFileSync(left, right);
  const r = openDatabase(right);
  r.pragma('synchronous = OFF');
  r.exec(change);
  r.close();
  return [left, right];
}

test('literals: NULL, integers, round-trip reals, quoted text, blobs, NUL-bearing text', () => {
  assert.equal(sqlLiteral(null), 'NULL');
  assert.equal(sqlLiteral(-9223372036854775808n), '-9223372036854775808');
  assert.equal(sqlLiteral(1), '1.0');
  assert.equal(sqlLiteral(0.1), '0.1');
  assert.equal(sqlLiteral(1e21), '1e+21');
  assert.equal(sqlLiteral(-Infinity), '-1e999');
  assert.equal(sqlLiteral("it's"), "'it''s'");
  assert.equal(sqlLiteral(Buffer.from([0, 255])), "X'00ff'");
  assert.equal(sqlLiteral('a\0b'), "('a' || char(0) || 'b')");
  assert.equal(sqlLiteral("\0'"), "('' || char(0) || '''')");
  assert.equal(quoteIdent('we"ird'), '"we""ird"');
  const db = openDatabase(':memory:');
  db.defaultSafeIntegers(true);
  for (const v of [0.1, 1 / 3, 123456789.98765433, 5e-324, 1.7976931348623157e308, 2 ** 53 + 2]) {
    assert.equal(
      db
        .prepare(`SELECT ${sqlLiteral(v)}`)
        .pluck()
        .get(),
      v,
    );
  }
  assert.equal(
    db
      .prepare(`SELECT typeof(${sqlLiteral(3)})`)
      .pluck()
      .get(),
    'real',
  );
  // Read through the engine's whole-text select list: Node 22's node:sqlite alone would cut the text at its NUL.
  const nul = wholeTextSelect(db, [sqlLiteral('a\0b'), `typeof(${sqlLiteral('a\0b')})`]);
  const row = db.prepare(`SELECT ${nul.list}`).raw().get() as unknown[];
  assert.deepEqual(nul.values?.(row) ?? row, ['a\0b', 'text']);
  db.close();
});

test('identical databases render no SQL', () => {
  const [l, r] = build('CREATE TABLE t(x); INSERT INTO t VALUES (1);', '');
  assert.equal(renderDiffSql(diffDatabases(l, r)), '');
});

test('row changes render as DELETE, UPDATE, INSERT in one transaction', () => {
  const [l, r] = build(
    "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b); INSERT INTO t VALUES (1,'x',1),(2,'y',2);",
    "DELETE FROM t WHERE id = 2; UPDATE t SET b = 1.5 WHERE id = 1; INSERT INTO t VALUES (3, X'ff', NULL);",
  );
  const sql = assertRoundTrip(l, r);
  assert.equal(
    sql,
    [
      'PRAGMA foreign_keys=OFF;',
      'BEGIN TRANSACTION;',
      'DELETE FROM "t" WHERE "id" = 2;',
      'UPDATE "t" SET "b" = 1.5 WHERE "id" = 1;',
      `INSERT INTO "t"("id", "a", "b") VALUES(3, X'ff', NULL);`,
      'COMMIT;',
      '',
    ].join('\n'),
  );
});

test('schema changes, rebuilt tables, triggers and AUTOINCREMENT round-trip', () => {
  const setup = `
    CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, email TEXT UNIQUE);
    CREATE TABLE audit(id INTEGER PRIMARY KEY, what TEXT);
    CREATE TABLE plain(a, b);
    CREATE TABLE kv(k TEXT, n INTEGER, v, PRIMARY KEY (k, n)) WITHOUT ROWID;
    CREATE TABLE legacy(x);
    CREATE INDEX users_name ON users(name);
    CREATE TRIGGER users_audit AFTER INSERT ON users BEGIN INSERT INTO audit(what) VALUES ('insert ' || new.name); END;
    CREATE VIEW user_names AS SELECT name FROM users;
    INSERT INTO users(name, email) VALUES ('ann', 'a@x'), ('bob', 'b@x'), ('cy', NULL);
    INSERT INTO plain VALUES (1, 2), (3, 4), (5, 6);
    INSERT INTO kv VALUES ('a', 1, 'one'), ('a', 2, X'02'), ('b', 1, 1.25);
    INSERT INTO legacy VALUES ('bye');`;
  const change = `
    INSERT INTO users(name, email) VALUES ('dee', 'd@x');
    DELETE FROM users WHERE name = 'bob';
    INSERT INTO users(name) VALUES ('eve'); DELETE FROM users WHERE name = 'eve';
    UPDATE users SET email = 'ann@x' WHERE name = 'ann';
    ALTER TABLE plain ADD COLUMN c TEXT NOT NULL DEFAULT 'd';
    UPDATE plain SET c = 'changed' WHERE a = 3;
    DELETE FROM plain WHERE a = 5; INSERT INTO plain(a, b) VALUES (7, 8);
    DELETE FROM kv WHERE k = 'a' AND n = 2; INSERT INTO kv VALUES ('c', -1, NULL);
    DROP TABLE legacy;
    CREATE TABLE extra(id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT);
    INSERT INTO extra(body) VALUES ('line1
line2'), ('tab	and ''quote''');
    CREATE INDEX kv_v ON kv(v);
    DROP VIEW user_names; CREATE VIEW user_names AS SELECT name, email FROM users;
    CREATE TRIGGER plain_guard BEFORE DELETE ON plain BEGIN SELECT 1; END;`;
  const [l, r] = build(setup, change);
  const sql = assertRoundTrip(l, r);
  assert.match(sql, /DROP TRIGGER "users_audit";/);
  assert.match(sql, /CREATE TEMP TABLE temp\."offshoot_rebuild"/);
});

test('a changed primary key and a column type change round-trip', () => {
  const [l, r] = build(
    "CREATE TABLE p(id INTEGER PRIMARY KEY, code TEXT, qty TEXT); INSERT INTO p VALUES (1, 'a', '10'), (2, 'b', 'x');",
    "CREATE TABLE p2(id INTEGER, code TEXT PRIMARY KEY, qty INTEGER) WITHOUT ROWID; INSERT INTO p2 SELECT * FROM p; DROP TABLE p; ALTER TABLE p2 RENAME TO p; INSERT INTO p VALUES (3, 'c', 7);",
  );
  assertRoundTrip(l, r);
});

test('a renamed table, its rewritten index and an INSTEAD OF trigger on a view round-trip', () => {
  const [l, r] = build(
    "CREATE TABLE old_name(id INTEGER PRIMARY KEY, v); CREATE INDEX old_v ON old_name(v); INSERT INTO old_name VALUES (1, 'a'), (2, 'b');",
    "ALTER TABLE old_name RENAME TO new_name; CREATE VIEW nv AS SELECT * FROM new_name; CREATE TRIGGER nv_ins INSTEAD OF INSERT ON nv BEGIN INSERT INTO new_name VALUES (new.id, new.v); END; INSERT INTO nv VALUES (3, 'c');",
  );
  assertRoundTrip(l, r);
});

test('NUL-bearing text round-trips in UTF-16 databases: its literal never reads UTF-8 bytes as UTF-16', () => {
  for (const encoding of ['UTF-16le', 'UTF-16be']) {
    const [l, r] = build(
      `PRAGMA encoding = '${encoding}'; CREATE TABLE t(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
        INSERT INTO t VALUES ('k' || char(0) || 'x', 'a' || char(0) || 'b'), ('y', 1);`,
      `UPDATE t SET v = char(0) || 'é' || char(0) WHERE k = 'k' || char(0) || 'x';
        INSERT INTO t VALUES (char(0), 'z' || char(0)); DELETE FROM t WHERE k = 'y';`,
    );
    assertRoundTrip(l, r);
  }
});

test('a NOCASE key whose case changed round-trips', () => {
  const [l, r] = build(
    "CREATE TABLE c(k TEXT COLLATE NOCASE PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO c VALUES ('abc', 1), ('x', 2);",
    "DELETE FROM c WHERE k = 'abc'; INSERT INTO c VALUES ('ABC', 1);",
  );
  assertRoundTrip(l, r);
});

test('an FTS5 table added and then edited round-trips through its shadow tables', () => {
  const [l, r] = build(
    "CREATE TABLE docs(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO docs VALUES (1, 'hello');",
    "CREATE VIRTUAL TABLE fts USING fts5(body); INSERT INTO fts VALUES ('hello world'), ('second doc');",
  );
  assertRoundTrip(l, r);
  const [l2, r2] = build(
    "CREATE VIRTUAL TABLE fts USING fts5(body); INSERT INTO fts VALUES ('hello world'), ('second doc');",
    "INSERT INTO fts VALUES ('third'); DELETE FROM fts WHERE rowid = 1;",
  );
  assertRoundTrip(l2, r2);
  const result = diffDatabases(l2, r2);
  assert.deepEqual(result.schema, []);
  assert.ok(!result.tables.some((t) => t.table === 'fts'), 'the virtual table itself is not row-diffed');
  assert.ok(result.tables.some((t) => t.table === 'fts_content' && t.status === 'changed'));
});

/** mulberry32: a tiny seeded PRNG so failures reproduce. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXTS = ['', 'a', 'A', "o'brien", 'é', '\uFFFD', '\u{1F600}', 'multi\nline', 'x'.repeat(3000), 'nul\0inside'];

function randomValue(rand: () => number): unknown {
  const pick = Math.floor(rand() * 8);
  switch (pick) {
    case 0:
      return null;
    case 1:
      return BigInt(Math.floor(rand() * 2000) - 1000);
    case 2:
      return rand() < 0.5 ? 9223372036854775807n : -9223372036854775808n;
    case 3:
      return (rand() - 0.5) * 10 ** Math.floor(rand() * 30 - 10);
    case 4:
      return Math.floor(rand() * 5) * 1.0;
    case 5:
      return Buffer.from(Array.from({ length: Math.floor(rand() * 6) }, () => Math.floor(rand() * 256)));
    default:
      return TEXTS[Math.floor(rand() * TEXTS.length)];
  }
}

const PROPERTY_SETUP = `
  CREATE TABLE ipk(id INTEGER PRIMARY KEY, a, b);
  CREATE TABLE bare(a, b);
  CREATE TABLE wr(k1 TEXT, k2, v, PRIMARY KEY (k1, k2)) WITHOUT ROWID;
  CREATE TABLE seq(id INTEGER PRIMARY KEY AUTOINCREMENT, v);
  CREATE TABLE log(id INTEGER PRIMARY KEY, msg);
  CREATE TRIGGER seq_log AFTER INSERT ON seq BEGIN INSERT INTO log(msg) VALUES ('seq ' || new.id); END;
  CREATE INDEX ipk_a ON ipk(a);`;

/** The key columns that pick one existing row of each mutated table. */
const ROW_KEY: Record<string, string> = { ipk: 'rowid', bare: 'rowid', seq: 'rowid', wr: '(k1, k2)' };

function mutate(db: SqliteDatabase, rand: () => number, steps: number): void {
  const tables = ['ipk', 'bare', 'wr', 'seq'];
  for (let i = 0; i < steps; i++) {
    const t = tables[Math.floor(rand() * tables.length)] ?? 'ipk';
    const op = rand();
    const v = () => randomValue(rand);
    const key = ROW_KEY[t] ?? 'rowid';
    const count = Number(db.prepare(`SELECT count(*) FROM ${t}`).pluck().get());
    const oneRow = `${key} IN (SELECT ${key === 'rowid' ? 'rowid' : 'k1, k2'} FROM ${t} LIMIT 1 OFFSET ${Math.floor(rand() * count)})`;
    if (op < 0.5) {
      if (t === 'ipk')
        db.prepare('INSERT OR REPLACE INTO ipk(id, a, b) VALUES (?, ?, ?)').run(
          BigInt(Math.floor(rand() * 60)),
          v(),
          v(),
        );
      else if (t === 'bare') db.prepare('INSERT INTO bare(a, b) VALUES (?, ?)').run(v(), v());
      else if (t === 'wr')
        db.prepare('INSERT OR REPLACE INTO wr(k1, k2, v) VALUES (?, ?, ?)').run(
          TEXTS[Math.floor(rand() * TEXTS.length)],
          BigInt(Math.floor(rand() * 4)),
          v(),
        );
      else db.prepare('INSERT INTO seq(v) VALUES (?)').run(v());
    } else if (op < 0.75) {
      if (count > 0)
        db.prepare(`UPDATE ${t} SET ${t === 'ipk' || t === 'bare' ? 'b' : 'v'} = ? WHERE ${oneRow}`).run(v());
    } else if (op < 0.95) {
      if (count > 0) db.prepare(`DELETE FROM ${t} WHERE ${oneRow}`).run();
    } else if (op < 0.97) {
      db.exec(`ALTER TABLE ${t} ADD COLUMN extra${i} DEFAULT ${Math.floor(rand() * 3)}`);
    } else if (op < 0.99) {
      db.exec(
        `CREATE INDEX IF NOT EXISTS idx_${t}_${i} ON ${t}(${t === 'wr' || t === 'seq' ? 'v' : t === 'bare' ? 'a' : 'id'})`,
      );
    } else {
      db.exec(
        `CREATE TABLE IF NOT EXISTS late${i}(x PRIMARY KEY, y) WITHOUT ROWID; INSERT INTO late${i} VALUES (1, 2);`,
      );
    }
  }
}

test('property: applying the SQL for random mutations reproduces the right side', () => {
  for (let seed = 1; seed <= 12; seed++) {
    const rand = prng(seed);
    const left = fresh('pl');
    const db = openDatabase(left);
    db.pragma('synchronous = OFF');
    db.exec(PROPERTY_SETUP);
    mutate(db, rand, 40);
    db.close();
    const right = fresh('pr');
    fs.copyFileSync(left, right);
    const rdb = openDatabase(right);
    rdb.pragma('synchronous = OFF');
    mutate(rdb, rand, 25);
    rdb.close();
    assertRoundTrip(left, right);
  }
});
