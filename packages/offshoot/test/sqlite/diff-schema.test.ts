import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { renderDiffSummary, renderDiffText } from '../../src/sqlite/diff/diff-format.js';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
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

const BASE = `
  CREATE TABLE keep(id INTEGER PRIMARY KEY, a TEXT);
  CREATE TABLE gone(id INTEGER PRIMARY KEY, b);
  INSERT INTO keep VALUES (1, 'x');
  INSERT INTO gone VALUES (1, 'old');
  CREATE INDEX keep_a ON keep(a);
  CREATE VIEW keep_v AS SELECT a FROM keep;
  CREATE TRIGGER keep_t AFTER INSERT ON keep BEGIN SELECT 1; END;
`;

test('added and removed tables, indexes, views and triggers', () => {
  const [l, r] = pair(
    BASE,
    `DROP TABLE gone; DROP INDEX keep_a; DROP VIEW keep_v; DROP TRIGGER keep_t;
     CREATE TABLE fresh(k TEXT PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO fresh VALUES ('a', 1);
     CREATE INDEX keep_a2 ON keep(a, id); CREATE VIEW fresh_v AS SELECT k FROM fresh;
     CREATE TRIGGER fresh_t AFTER DELETE ON fresh BEGIN SELECT 2; END;`,
  );
  const result = diffDatabases(l, r);
  assert.deepEqual(
    result.schema.map((c) => `${c.change} ${c.type} ${c.name}`),
    [
      'removed table gone',
      'removed index keep_a',
      'removed view keep_v',
      'removed trigger keep_t',
      'added table fresh',
      'added index keep_a2',
      'added view fresh_v',
      'added trigger fresh_t',
    ],
  );
  assert.equal(
    result.schema.find((c) => c.name === 'fresh')?.right,
    'CREATE TABLE fresh(k TEXT PRIMARY KEY, v) WITHOUT ROWID',
  );
  assert.equal(result.schema.find((c) => c.name === 'gone')?.left, 'CREATE TABLE gone(id INTEGER PRIMARY KEY, b)');
  const byName = new Map(result.tables.map((t) => [t.table, t]));
  assert.equal(byName.get('gone')?.status, 'removed');
  assert.deepEqual(byName.get('gone')?.removed, [{ id: 1n, b: 'old' }]);
  assert.equal(byName.get('fresh')?.status, 'added');
  assert.deepEqual(byName.get('fresh')?.added, [{ k: 'a', v: 1n }]);
  assert.equal(byName.get('keep')?.status, 'same');
});

test('a changed view or trigger is one change with both DDLs', () => {
  const [l, r] = pair(BASE, 'DROP VIEW keep_v; CREATE VIEW keep_v AS SELECT a, id FROM keep;');
  const result = diffDatabases(l, r);
  assert.deepEqual(result.schema, [
    {
      type: 'view',
      name: 'keep_v',
      change: 'changed',
      left: 'CREATE VIEW keep_v AS SELECT a FROM keep',
      right: 'CREATE VIEW keep_v AS SELECT a, id FROM keep',
    },
  ]);
});

test('an added column is a schema change plus a row diff that sees the new values', () => {
  const [l, r] = pair(
    BASE,
    "ALTER TABLE keep ADD COLUMN flag INTEGER NOT NULL DEFAULT 0; INSERT INTO keep VALUES (2, 'y', 1); INSERT INTO keep VALUES (3, 'z', 0);",
  );
  const result = diffDatabases(l, r);
  assert.deepEqual(
    result.schema.map((c) => `${c.change} ${c.type} ${c.name}`),
    ['changed table keep'],
  );
  const keep = result.tables.find((t) => t.table === 'keep');
  assert.equal(keep?.status, 'changed');
  assert.deepEqual(keep?.changed, []);
  assert.deepEqual(keep?.added, [
    { id: 2n, a: 'y', flag: 1n },
    { id: 3n, a: 'z', flag: 0n },
  ]);
  assert.deepEqual(keep?.rebuild, { copy: ['id', 'a'], fill: { flag: 0n } });
  const text = renderDiffText(result, 'L', 'R');
  assert.match(
    text,
    /^left: {2}L right: R\nschema:\n {2}~ table keep\n {6}left: {2}CREATE TABLE keep\(id INTEGER PRIMARY KEY, a TEXT\)\n {6}right: CREATE TABLE keep\(id INTEGER PRIMARY KEY, a TEXT, flag INTEGER NOT NULL DEFAULT 0\)\n/,
  );
});

test('a surviving row whose new column differs from the default shows as changed', () => {
  const [l, r] = pair(
    BASE,
    "ALTER TABLE keep ADD COLUMN note TEXT DEFAULT 'none'; UPDATE keep SET note = 'hi' WHERE id = 1;",
  );
  const keep = diffDatabases(l, r).tables.find((t) => t.table === 'keep');
  assert.deepEqual(keep?.changed, [
    { key: { id: 1n }, before: { id: 1n, a: 'x' }, after: { id: 1n, a: 'x', note: 'hi' } },
  ]);
});

test("a new column's default is compared with the column's affinity applied", () => {
  const [l, r] = pair(
    BASE,
    "ALTER TABLE keep ADD COLUMN n INTEGER DEFAULT '5'; ALTER TABLE keep ADD COLUMN s TEXT DEFAULT 7;",
  );
  const keep = diffDatabases(l, r).tables.find((t) => t.table === 'keep');
  assert.equal(keep?.status, 'same');
  assert.deepEqual(keep?.rebuild?.fill, { n: 5n, s: '7' });
});

test('a changed primary key replaces every row', () => {
  const [l, r] = pair(
    BASE,
    'DROP VIEW keep_v; DROP TRIGGER keep_t; CREATE TABLE k2(id, a TEXT, PRIMARY KEY (a)) WITHOUT ROWID; INSERT INTO k2 SELECT id, a FROM keep; DROP TABLE keep; ALTER TABLE k2 RENAME TO keep;',
  );
  const keep = diffDatabases(l, r).tables.find((t) => t.table === 'keep');
  assert.deepEqual(keep?.key, ['a']);
  assert.deepEqual(keep?.removed, [{ id: 1n, a: 'x' }]);
  assert.deepEqual(keep?.added, [{ a: 'x', id: 1n }]);
  assert.deepEqual(keep?.rebuild?.copy, []);
});

test('summary: aligned TABLE L R STATUS table with the old wording and totals', () => {
  const setup = `
    CREATE TABLE grow(id INTEGER PRIMARY KEY); INSERT INTO grow VALUES (1), (2);
    CREATE TABLE shrink(id INTEGER PRIMARY KEY); INSERT INTO shrink VALUES (1), (2), (3);
    CREATE TABLE edited(id INTEGER PRIMARY KEY, v); INSERT INTO edited VALUES (1, 'a');
    CREATE TABLE steady(id INTEGER PRIMARY KEY, v); INSERT INTO steady VALUES (1, 'a');
    CREATE TABLE dropped(id INTEGER PRIMARY KEY); INSERT INTO dropped VALUES (1);
    CREATE TABLE counter(id INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO counter DEFAULT VALUES;`;
  const change = `
    INSERT INTO grow VALUES (3), (4), (5); DELETE FROM shrink WHERE id = 1; UPDATE edited SET v = 'b';
    DROP TABLE dropped; CREATE TABLE a_new_table(x); INSERT INTO a_new_table VALUES (1), (2);`;
  for (const summaryOnly of [true, false]) {
    const [l, r] = pair(setup, change);
    const out = renderDiffSummary(diffDatabases(l, r, { summaryOnly }), 'db@main', 'db@exp');
    assert.equal(
      out,
      [
        'left:  db@main right: db@exp',
        'TABLE        db@main  db@exp  STATUS',
        'a_new_table  -        2       added',
        'counter      1        1       same',
        'dropped      1        -       removed',
        'edited       1        1       changed',
        'grow         2        5       changed (+3)',
        'shrink       3        2       changed (-1)',
        'steady       1        1       same',
        '7 tables: 2 same, 3 changed, 1 added, 1 removed',
        '',
      ].join('\n'),
    );
  }
});
