import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { changedPages as changedPagesOf, forkFile } from './file-forks.js';
import { closeRawDb, mapBtreePages, openRawDb } from '../../src/sqlite/diff/btree-walk.js';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { renderDiffSummary } from '../../src/sqlite/diff/diff-format.js';

const TABLES = 20;
const ROWS = 10_000;

let dir: string;
let base: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  base = path.join(dir, 'base.db');
  const db = openDatabase(base);
  db.pragma('journal_mode = DELETE');
  // Durability is irrelevant for a throwaway fixture, and fsyncing 50 MB per write dominates the runtime.
  db.pragma('synchronous = OFF');
  db.exec('BEGIN');
  for (let t = 0; t < TABLES; t++) {
    db.exec(`CREATE TABLE t${t}(id INTEGER PRIMARY KEY, name TEXT, payload BLOB, score REAL)`);
    db.exec(`CREATE INDEX t${t}_name ON t${t}(name)`);
    db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${ROWS})
             INSERT INTO t${t}(id, name, payload, score) SELECT i, printf('row-%06d', i), randomblob(200), i * 0.5 FROM s`);
  }
  db.exec('COMMIT');
  db.close();
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A fork is a file copy with some SQL applied in rollback-journal mode, so every change lands in the file. */
const fork = (name: string, sql: string): string => forkFile(base, dir, name, sql);

/** Page numbers whose bytes differ, at the base's page size. */
function changedPages(a: string, b: string): Set<number> {
  const db = openDatabase(a, { readonly: true });
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  db.close();
  return changedPagesOf(a, b, pageSize);
}

test('the fixture is a ~50 MB database with 20 tables', () => {
  const size = fs.statSync(base).size;
  assert.ok(size > 45e6 && size < 80e6, `size ${size}`);
});

test('one changed row: with changedPages only the touched table is read', () => {
  const right = fork('one-row', "UPDATE t7 SET name = 'edited' WHERE id = 4321");
  const pages = changedPages(base, right);
  assert.ok(pages.size > 0 && pages.size < 10, `${pages.size} pages differ`);
  const narrow = diffDatabases(base, right, { changedPages: pages });
  assert.equal(narrow.stats.narrowed, true);
  assert.equal(narrow.stats.tablesCompared, 1);
  // Only the rows on the changed leaf pages (both sides) are read, not the table.
  assert.ok(narrow.stats.rowsScanned > 0 && narrow.stats.rowsScanned < 200, `${narrow.stats.rowsScanned} rows read`);
  const filePages = fs.statSync(base).size / 4096;
  assert.ok(
    narrow.stats.pagesRead > 0 && narrow.stats.pagesRead < filePages / 20,
    `${narrow.stats.pagesRead} of ${filePages} pages read`,
  );
  const changed = narrow.tables.filter((t) => t.status !== 'same');
  assert.deepEqual(
    changed.map((t) => [t.table, t.changed.map((c) => [c.key.id, c.before.name, c.after.name])]),
    [['t7', [[4321n, 'row-004321', 'edited']]]],
  );
  assert.equal(narrow.tables.length, TABLES);
  const full = diffDatabases(base, right);
  assert.equal(full.stats.narrowed, false);
  assert.equal(full.stats.pagesRead, 0);
  assert.equal(full.stats.tablesCompared, TABLES);
  assert.deepEqual(
    full.tables.filter((t) => t.status !== 'same').map((t) => t.changed),
    changed.map((t) => t.changed),
  );
});

test('summary with changedPages counts untouched tables once and reads rows of the touched one only', () => {
  const right = fork('summary', "DELETE FROM t3 WHERE id <= 5; INSERT INTO t12(name) VALUES ('x')");
  const result = diffDatabases(base, right, { changedPages: changedPages(base, right), summaryOnly: true });
  assert.equal(result.stats.tablesCompared, 2);
  // Each table is counted once, on the left: the touched tables' right counts follow from the rows on their changed
  // pages, which are all that is read of them (tens of rows, never a table's 10,000).
  assert.equal(result.stats.tablesCounted, 20);
  assert.ok(result.stats.rowsScanned < 200, `${result.stats.rowsScanned} rows read`);
  const out = renderDiffSummary(result, 'L', 'R');
  assert.match(out, /\nt3 +10000 +9995 +changed \(-5\)\n/);
  assert.match(out, /\nt12 +10000 +10001 +changed \(\+1\)\n/);
  assert.match(out, /\nt0 +10000 +10000 +same\n/);
  assert.match(out, /\n20 tables: 18 same, 2 changed, 0 added, 0 removed\n$/);
});

test("summary above the count limit: only the changed pages' rows decide, nothing is counted", () => {
  // Past 64 MiB a COUNT would read the whole table, which a narrowed diff never does: no counts, as a full diff.
  const big = path.join(dir, 'big.db');
  const db = openDatabase(big);
  db.pragma('journal_mode = DELETE');
  db.pragma('synchronous = OFF');
  db.exec(`CREATE TABLE b(id INTEGER PRIMARY KEY, payload BLOB); CREATE TABLE quiet(id INTEGER PRIMARY KEY, v TEXT);
           INSERT INTO quiet VALUES (1, 'x');
           WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 70000)
           INSERT INTO b(id, payload) SELECT i, randomblob(1000) FROM s`);
  db.close();
  assert.ok(fs.statSync(big).size > 64 * 2 ** 20);
  const right = path.join(dir, 'big-right.db');
  fs.copyFileSync(big, right);
  const w = openDatabase(right);
  w.pragma('synchronous = OFF');
  w.exec("UPDATE b SET payload = x'00' WHERE id = 35000; INSERT INTO b(payload) VALUES (x'01'), (x'02')");
  w.close();
  const result = diffDatabases(big, right, { changedPages: changedPages(big, right), summaryOnly: true });
  const b = result.tables.find((t) => t.table === 'b');
  assert.equal(b?.status, 'changed');
  assert.equal(b?.leftCount, undefined);
  assert.equal(b?.rightCount, undefined);
  assert.equal(result.tables.find((t) => t.table === 'quiet')?.status, 'same');
  assert.equal(result.stats.tablesCounted, 0, 'nothing counted');
  assert.ok(result.stats.rowsScanned < 100, `${result.stats.rowsScanned} rows scanned`);
  const same = diffDatabases(big, big, { changedPages: new Set(), summaryOnly: true });
  assert.deepEqual(
    same.tables.map((t) => t.status),
    ['same', 'same'],
  );
});

test('an empty changedPages set still compares the schema; DDL changes force a table in', () => {
  const right = fork('ddl', 'ALTER TABLE t5 ADD COLUMN extra INTEGER DEFAULT 3; CREATE INDEX t9_score ON t9(score)');
  const result = diffDatabases(base, right, { changedPages: new Set() });
  assert.deepEqual(
    result.schema.map((c) => `${c.change} ${c.type} ${c.name}`),
    ['changed table t5', 'added index t9_score'],
  );
  assert.equal(result.stats.tablesCompared, 1);
  assert.equal(result.tables.find((t) => t.table === 't5')?.status, 'same');
});

test('a pending -wal makes changedPages untrustworthy, so everything is compared', () => {
  const left = path.join(dir, 'small.db');
  const setup = openDatabase(left);
  setup.exec(
    "CREATE TABLE a(id INTEGER PRIMARY KEY, v); CREATE TABLE b(id INTEGER PRIMARY KEY, v); INSERT INTO a VALUES (1, 'x'); INSERT INTO b VALUES (1, 'y');",
  );
  setup.close();
  const right = path.join(dir, 'small-wal.db');
  fs.copyFileSync(left, right);
  const writer = openDatabase(right);
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec("UPDATE b SET v = 'in-wal' WHERE id = 1");
  try {
    const pages = changedPages(left, right);
    assert.ok(!pages.has(3), 'the change is in the -wal, not in the file');
    const result = diffDatabases(left, right, { changedPages: pages });
    assert.equal(result.stats.narrowed, false);
    assert.equal(result.stats.tablesCompared, 2);
    assert.deepEqual(
      result.tables.filter((t) => t.status !== 'same').map((t) => t.table),
      ['b'],
    );
  } finally {
    writer.close();
  }
});

test('different page sizes make changedPages meaningless, so everything is compared', () => {
  const left = path.join(dir, 'ps1.db');
  const right = path.join(dir, 'ps2.db');
  for (const [file, size] of [
    [left, 4096],
    [right, 1024],
  ] as const) {
    const db = openDatabase(file);
    db.pragma(`page_size = ${size}`);
    db.exec("CREATE TABLE a(id INTEGER PRIMARY KEY, v); INSERT INTO a VALUES (1, 'x');");
    db.close();
  }
  const result = diffDatabases(left, right, { changedPages: new Set() });
  assert.equal(result.stats.narrowed, false);
  assert.equal(result.stats.tablesCompared, 1);
});

test('the interior-page walk places every b-tree page where dbstat does', () => {
  const db = openDatabase(base, { readonly: true });
  const roots = new Map<number, string>([[1, 'sqlite_schema']]);
  for (const r of db.prepare('SELECT name, rootpage FROM sqlite_schema WHERE rootpage > 0').all() as Array<{
    name: string;
    rootpage: number;
  }>) {
    roots.set(r.rootpage, r.name);
  }
  const expected = new Map(
    (
      db.prepare("SELECT pageno, name FROM dbstat WHERE pagetype != 'overflow'").all() as Array<{
        pageno: number;
        name: string;
      }>
    ).map((r) => [r.pageno, r.name]),
  );
  db.close();
  const raw = openRawDb(base);
  assert.ok(raw !== undefined);
  try {
    const { owners, pagesRead } = mapBtreePages(raw, roots);
    assert.deepEqual(owners, expected);
    assert.ok(pagesRead < raw.pageCount / 20, `${pagesRead} of ${raw.pageCount} pages read`);
  } finally {
    closeRawDb(raw);
  }
});

test('a changed page is placed by a descent of its own key, or by walking the indexes only, never every tree', () => {
  const raw = openRawDb(base);
  assert.ok(raw !== undefined);
  let walked: number;
  try {
    const db = openDatabase(base, { readonly: true });
    const roots = new Map(
      (
        db.prepare('SELECT rootpage, name FROM sqlite_schema WHERE rootpage > 0').all() as Array<{
          rootpage: number;
          name: string;
        }>
      ).map((r) => [r.rootpage, r.name]),
    );
    db.close();
    walked = mapBtreePages(raw, roots).pagesRead;
  } finally {
    closeRawDb(raw);
  }
  // An unindexed column: only table pages change, each placed by about depth × tables reads.
  const score = fork('score', 'UPDATE t13 SET score = -1 WHERE id = 777');
  const bySeek = diffDatabases(base, score, { changedPages: changedPages(base, score) });
  assert.deepEqual(
    bySeek.tables.filter((t) => t.status !== 'same').map((t) => t.table),
    ['t13'],
  );
  assert.ok(bySeek.stats.pagesRead <= 2 * (TABLES + 1) * 4, `${bySeek.stats.pagesRead} pages read`);
  // An indexed column: its index pages are placed by walking the index b-trees only (here about as big as the
  // tables: small rows), less than walking every tree on both sides.
  const name = fork('name', "UPDATE t13 SET name = 'renamed' WHERE id = 777");
  const byIndex = diffDatabases(base, name, { changedPages: changedPages(base, name) });
  assert.deepEqual(
    byIndex.tables.filter((t) => t.status !== 'same').map((t) => t.table),
    ['t13'],
  );
  assert.ok(
    byIndex.stats.pagesRead < 2 * walked,
    `${byIndex.stats.pagesRead} pages read; a walk of every tree reads ${walked} a side`,
  );
});

test('rows appended to a big table: the children of its changed interior pages are not each placed', () => {
  // One row a leaf, as with large documents: the table's interior pages each have hundreds of children.
  const left = path.join(dir, 'docs.db');
  const setup = openDatabase(left);
  setup.pragma('journal_mode = DELETE');
  setup.pragma('synchronous = OFF');
  setup.exec(`CREATE TABLE docs(id INTEGER PRIMARY KEY, body BLOB);
    WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 2000)
    INSERT INTO docs(id, body) SELECT i, randomblob(3000) FROM s`);
  setup.close();
  const right = path.join(dir, 'docs-appended.db');
  fs.copyFileSync(left, right);
  const edit = openDatabase(right);
  edit.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10)
    INSERT INTO docs(body) SELECT zeroblob(200) FROM s`);
  edit.close();
  const pages = changedPages(left, right);
  const narrow = diffDatabases(left, right, { changedPages: pages });
  assert.equal(narrow.stats.narrowed, true);
  const docs = narrow.tables.find((t) => t.table === 'docs');
  assert.deepEqual(
    docs?.added.map((r) => r.id),
    Array.from({ length: 10 }, (_, i) => BigInt(2001 + i)),
  );
  assert.equal(docs?.leftCount, 2000);
  assert.equal(docs?.rightCount, 2010);
  // About depth × changed pages a side, where placing each child of the changed interior page read one page apiece.
  assert.ok(narrow.stats.pagesRead <= 8 * pages.size, `${narrow.stats.pagesRead} pages read for ${pages.size} changed`);
});

test('a changed overflow page is not reached by the walk, so that side falls back to dbstat and the row still shows', () => {
  const left = path.join(dir, 'overflow.db');
  const setup = openDatabase(left);
  setup.pragma('page_size = 1024');
  setup.exec('CREATE TABLE a(id INTEGER PRIMARY KEY, v BLOB); CREATE TABLE b(id INTEGER PRIMARY KEY, v)');
  setup.exec("INSERT INTO a VALUES (1, zeroblob(5000)); INSERT INTO b VALUES (1, 'x')");
  setup.close();
  const right = path.join(dir, 'overflow-edited.db');
  fs.copyFileSync(left, right);
  const writer = openDatabase(right);
  // Same length, new last byte: SQLite overwrites the cell in place, so only the chain's last overflow page differs.
  writer.exec("UPDATE a SET v = CAST(zeroblob(4999) || x'01' AS BLOB) WHERE id = 1");
  writer.close();
  const pages = changedPages(left, right);
  const reader = openDatabase(right, { readonly: true });
  const overflow = new Set(
    reader.prepare("SELECT pageno FROM dbstat WHERE pagetype = 'overflow'").pluck().all() as number[],
  );
  reader.close();
  assert.ok(
    [...pages].some((p) => overflow.has(p)),
    `changed pages ${[...pages]} include an overflow page`,
  );
  assert.ok(
    [...pages].every((p) => p === 1 || overflow.has(p)),
    `changed pages ${[...pages]}: no b-tree page of a differs`,
  );
  const result = diffDatabases(left, right, { changedPages: pages });
  assert.equal(result.stats.narrowed, true);
  const filePages = fs.statSync(left).size / 1024;
  assert.ok(
    result.stats.pagesRead >= 2 * filePages,
    `${result.stats.pagesRead} pages read: both sides fell back to a full dbstat pass`,
  );
  assert.deepEqual(
    result.tables.map((t) => [t.table, t.status, t.changed.map((c) => c.key.id)]),
    [
      ['a', 'changed', [1n]],
      ['b', 'same', []],
    ],
  );
  assert.equal(result.stats.tablesCompared, 1);
});
