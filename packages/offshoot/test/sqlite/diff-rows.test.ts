import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { hasCode } from '../../src/core/errors.js';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { diffToJson } from '../../src/sqlite/diff/diff-json.js';
import { renderDiffSql } from '../../src/sqlite/diff/diff-sql.js';
import { renderDiffText } from '../../src/sqlite/diff/diff-format.js';
import type { TableDiff } from '../../src/sqlite/diff/diff-types.js';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** Builds a database from setup SQL, then a copy of it with more SQL applied; returns both paths. */
function pair(setup: string, change: string): [string, string] {
  n++;
  const left = path.join(dir, `l${n}.db`);
  const right = path.join(dir, `r${n}.db`);
  const db = openDatabase(left);
  db.exec(setup);
  db.close();
  fs.copyFileSync(left, right);
  const r = openDatabase(right);
  r.exec(change);
  r.close();
  return [left, right];
}

function table(result: { tables: TableDiff[] }, name: string): TableDiff {
  const t = result.tables.find((x) => x.table === name);
  assert.ok(t, `table ${name} in result`);
  return t;
}

test('identical databases give an empty diff and empty SQL', () => {
  const [l, r] = pair(
    "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT); INSERT INTO t VALUES (1, 'x'), (2, NULL); CREATE INDEX ta ON t(a);",
    '',
  );
  const result = diffDatabases(l, r);
  assert.deepEqual(result.schema, []);
  assert.deepEqual(
    result.tables.map((t) => [t.table, t.status, t.leftCount, t.rightCount]),
    [['t', 'same', 2, 2]],
  );
  assert.equal(renderDiffSql(result), '');
  assert.equal(renderDiffText(result, 'db@main', 'db@fork'), 'left:  db@main right: db@fork\nno differences\n');
});

test('rowid table: inserts, deletes and updates by INTEGER PRIMARY KEY', () => {
  const [l, r] = pair(
    "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER); INSERT INTO t VALUES (1,'one',10),(2,'two',20),(3,'three',30),(4,'four',40);",
    "DELETE FROM t WHERE id = 2; UPDATE t SET b = 31 WHERE id = 3; INSERT INTO t VALUES (5,'five',50); INSERT INTO t VALUES (0,'zero',0);",
  );
  const t = table(diffDatabases(l, r), 't');
  assert.equal(t.status, 'changed');
  assert.deepEqual(t.key, ['id']);
  assert.deepEqual(t.added, [
    { id: 0n, a: 'zero', b: 0n },
    { id: 5n, a: 'five', b: 50n },
  ]);
  assert.deepEqual(t.removed, [{ id: 2n, a: 'two', b: 20n }]);
  assert.deepEqual(t.changed, [
    { key: { id: 3n }, before: { id: 3n, a: 'three', b: 30n }, after: { id: 3n, a: 'three', b: 31n } },
  ]);
  assert.equal(t.leftCount, 4);
  assert.equal(t.rightCount, 5);
});

test('a table without INTEGER PRIMARY KEY is matched by rowid', () => {
  const [l, r] = pair(
    "CREATE TABLE p(name TEXT, v); INSERT INTO p VALUES ('a', 1), ('b', 2);",
    "UPDATE p SET v = 3 WHERE name = 'b'; INSERT INTO p VALUES ('c', 4);",
  );
  const p = table(diffDatabases(l, r), 'p');
  assert.deepEqual(p.key, ['rowid']);
  assert.deepEqual(p.changed, [
    { key: { rowid: 2n }, before: { rowid: 2n, name: 'b', v: 2n }, after: { rowid: 2n, name: 'b', v: 3n } },
  ]);
  assert.deepEqual(p.added, [{ rowid: 3n, name: 'c', v: 4n }]);
});

test('a column named rowid moves the key to another rowid alias', () => {
  const [l, r] = pair('CREATE TABLE q("rowid" TEXT, v); INSERT INTO q VALUES (\'x\', 1);', 'UPDATE q SET v = 2;');
  const q = table(diffDatabases(l, r), 'q');
  assert.deepEqual(q.key, ['_rowid_']);
  assert.deepEqual(q.changed[0]?.after, { _rowid_: 1n, rowid: 'x', v: 2n });
});

test('WITHOUT ROWID table with a composite text key', () => {
  const [l, r] = pair(
    "CREATE TABLE w(k1 TEXT, k2 TEXT, v, PRIMARY KEY (k1, k2)) WITHOUT ROWID; INSERT INTO w VALUES ('a','x',1),('a','y',2),('b','x',3);",
    "DELETE FROM w WHERE k1 = 'a' AND k2 = 'y'; UPDATE w SET v = 'three' WHERE k1 = 'b'; INSERT INTO w VALUES ('a','z',4), ('0','0',0);",
  );
  const w = table(diffDatabases(l, r), 'w');
  assert.deepEqual(w.key, ['k1', 'k2']);
  assert.deepEqual(w.removed, [{ k1: 'a', k2: 'y', v: 2n }]);
  assert.deepEqual(w.added, [
    { k1: '0', k2: '0', v: 0n },
    { k1: 'a', k2: 'z', v: 4n },
  ]);
  assert.deepEqual(w.changed, [
    { key: { k1: 'b', k2: 'x' }, before: { k1: 'b', k2: 'x', v: 3n }, after: { k1: 'b', k2: 'x', v: 'three' } },
  ]);
});

test("blobs, NULLs and reals compare by type and value: 1, 1.0 and '1' all differ", () => {
  const [l, r] = pair(
    "CREATE TABLE v(id INTEGER PRIMARY KEY, x); INSERT INTO v VALUES (1, 1), (2, 1.0), (3, '1'), (4, X'0102'), (5, NULL), (6, 0.1), (7, X'0102'), (8, NULL);",
    "UPDATE v SET x = 1.0 WHERE id = 1; UPDATE v SET x = '1' WHERE id = 2; UPDATE v SET x = 1 WHERE id = 3; UPDATE v SET x = X'0103' WHERE id = 4; UPDATE v SET x = 0 WHERE id = 5; UPDATE v SET x = 0.30000000000000004 WHERE id = 6; UPDATE v SET x = X'0102' WHERE id = 7; UPDATE v SET x = NULL WHERE id = 8;",
  );
  const v = table(diffDatabases(l, r), 'v');
  assert.deepEqual(
    v.changed.map((c) => [c.key.id, c.before.x, c.after.x]),
    [
      [1n, 1n, 1],
      [2n, 1, '1'],
      [3n, '1', 1n],
      [4n, Buffer.from([1, 2]), Buffer.from([1, 3])],
      [5n, null, 0n],
      [6n, 0.1, 0.30000000000000004],
    ],
  );
});

test('keys of mixed types and tricky text merge in SQLite order', () => {
  const keys = [
    "'a'",
    "'é'",
    "'\uFFFD'",
    "'\u{1F600}'",
    "'z'",
    "'Z'",
    '1',
    '2.5',
    '-3',
    "X'00'",
    "X''",
    '9223372036854775807',
    '-9223372036854775808',
    '1e300',
    "''",
  ];
  const setup = `CREATE TABLE m(k PRIMARY KEY, v) WITHOUT ROWID; ${keys.map((k, i) => `INSERT INTO m VALUES (${k}, ${i});`).join(' ')}`;
  const [l, r] = pair(setup, '');
  assert.equal(table(diffDatabases(l, r), 'm').status, 'same');
  const [l2, r2] = pair(
    setup,
    "INSERT INTO m VALUES ('\u{1F601}', 99), (2, 98), ('ab', 97); DELETE FROM m WHERE k IN ('\uFFFD', 'a');",
  );
  const m = table(diffDatabases(l2, r2), 'm');
  assert.deepEqual(
    m.added.map((a) => a.k),
    [2n, 'ab', '\u{1F601}'],
  );
  assert.deepEqual(
    m.removed.map((a) => a.k),
    ['a', '\uFFFD'],
  );
  assert.equal(m.changed.length, 0);
});

test('a NOCASE text key still merges correctly (sorted BINARY on both sides)', () => {
  const [l, r] = pair(
    "CREATE TABLE c(k TEXT COLLATE NOCASE PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO c VALUES ('b',1),('A',2),('c',3);",
    "UPDATE c SET v = 20 WHERE k = 'a'; INSERT INTO c VALUES ('B2', 4);",
  );
  const c = table(diffDatabases(l, r), 'c');
  assert.deepEqual(
    c.changed.map((x) => x.key),
    [{ k: 'A' }],
  );
  assert.deepEqual(
    c.added.map((x) => x.k),
    ['B2'],
  );
});

test('generated columns are not compared', () => {
  const [l, r] = pair(
    'CREATE TABLE g(id INTEGER PRIMARY KEY, a INT, b INT GENERATED ALWAYS AS (a * 2) STORED); INSERT INTO g(id, a) VALUES (1, 1), (2, 2);',
    'UPDATE g SET a = 5 WHERE id = 2;',
  );
  const g = table(diffDatabases(l, r), 'g');
  assert.deepEqual(g.changed, [{ key: { id: 2n }, before: { id: 2n, a: 2n }, after: { id: 2n, a: 5n } }]);
});

test('summaryOnly keeps no rows and stops at the first difference', () => {
  const rows = Array.from({ length: 200 }, (_, i) => `(${i}, ${i})`).join(',');
  const [l, r] = pair(
    `CREATE TABLE s(id INTEGER PRIMARY KEY, v); INSERT INTO s VALUES ${rows};`,
    'UPDATE s SET v = -1 WHERE id = 3;',
  );
  const result = diffDatabases(l, r, { summaryOnly: true });
  const s = table(result, 's');
  assert.equal(s.status, 'changed');
  assert.equal(s.leftCount, 200);
  assert.equal(s.rightCount, 200);
  assert.deepEqual([s.added, s.removed, s.changed], [[], [], []]);
  assert.ok(result.stats.rowsScanned <= 8, `scanned ${result.stats.rowsScanned} rows`);
  assert.equal(result.summaryOnly, true);
  assert.throws(
    () => renderDiffSql(result),
    (e) => hasCode(e, 'INVALID_ARGUMENT'),
  );
});

test('JSON output encodes blobs, large integers and infinities as tagged objects', () => {
  const [l, r] = pair(
    'CREATE TABLE j(id INTEGER PRIMARY KEY, x);',
    "INSERT INTO j VALUES (1, X'00ff'), (2, 9007199254740993), (3, 1e999), (4, 'text'), (5, 2.5), (6, NULL), (7, 42);",
  );
  const json = diffToJson(diffDatabases(l, r));
  const j = json.tables.find((t) => t.table === 'j');
  assert.deepEqual(
    j?.added.map((a) => a.x),
    [{ $blob: '00ff' }, { $int: '9007199254740993' }, { $real: 'Infinity' }, 'text', 2.5, null, 42],
  );
  assert.deepEqual(JSON.parse(JSON.stringify(json)), json);
  assert.equal(j?.left_count, 0);
  assert.equal(j?.right_count, 7);
});

test('text rendering marks removed, added and changed rows', () => {
  const [l, r] = pair(
    "CREATE TABLE t(id INTEGER PRIMARY KEY, a); INSERT INTO t VALUES (1,'x'),(2,'it''s');",
    "DELETE FROM t WHERE id = 2; UPDATE t SET a = X'ab' WHERE id = 1; INSERT INTO t VALUES (3, 1.0);",
  );
  const text = renderDiffText(diffDatabases(l, r), 'a', 'b');
  assert.equal(
    text,
    [
      'left:  a right: b',
      'table t (key id): changed, 1 added, 1 removed, 1 changed',
      "  - id=2 a='it''s'",
      '  + id=3 a=1.0',
      "  ~ id=1  a: 'x' -> X'ab'",
      '',
    ].join('\n'),
  );
});

test('a missing file is NOT_FOUND and a non-database is CORRUPT', () => {
  const [l] = pair('CREATE TABLE t(x);', '');
  assert.throws(
    () => diffDatabases(l, path.join(dir, 'nope.db')),
    (e) => hasCode(e, 'NOT_FOUND'),
  );
  const junk = path.join(dir, 'junk.db');
  fs.writeFileSync(junk, Buffer.alloc(8192, 0x41));
  assert.throws(
    () => diffDatabases(junk, l),
    (e) => hasCode(e, 'CORRUPT'),
  );
});

test('a database with a corrupt b-tree page is CORRUPT, not a crash or a hang', () => {
  const rows = Array.from({ length: 3000 }, (_, i) => `(${i}, '${'v'.repeat(40)}')`).join(',');
  const [l, r] = pair(
    `CREATE TABLE big(id INTEGER PRIMARY KEY, v); INSERT INTO big VALUES ${rows};`,
    'UPDATE big SET v = 1 WHERE id = 7;',
  );
  const fd = fs.openSync(r, 'r+');
  fs.writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4096 * 10);
  fs.closeSync(fd);
  assert.throws(
    () => diffDatabases(l, r),
    (e) => hasCode(e, 'CORRUPT'),
  );
});
