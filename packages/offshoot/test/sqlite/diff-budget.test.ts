// A diff keeps at most maxBytes of rows (as JSON): past it, TOO_LARGE naming the narrower requests, which answer.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { hasCode } from '../../src/core/errors.js';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';

let dir: string;
let left: string;
let right: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  left = path.join(dir, 'l.db');
  right = path.join(dir, 'r.db');
  const db = openDatabase(left);
  db.exec(
    'CREATE TABLE big(id INTEGER PRIMARY KEY, b BLOB); CREATE TABLE small(id INTEGER PRIMARY KEY, v TEXT);' +
      'CREATE INDEX small_v ON small(v); CREATE INDEX big_b ON big(b);',
  );
  db.close();
  fs.copyFileSync(left, right);
  const r = openDatabase(right);
  r.exec(
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200) INSERT INTO big SELECT x, randomblob(1000) FROM c; INSERT INTO small VALUES (1, 'one'); DROP INDEX big_b; CREATE INDEX small_id_v ON small(id, v);",
  );
  r.close();
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('past the cap the diff fails TOO_LARGE naming summary and a table; both of those answer within it', () => {
  assert.throws(
    () => diffDatabases(left, right, { maxBytes: 100_000 }),
    (err: unknown) => {
      assert.ok(hasCode(err, 'TOO_LARGE'), String(err));
      assert.match(err.message, /table "big"/);
      assert.match(err.hint ?? '', /--summary/);
      assert.match(err.hint ?? '', /--table big/);
      return true;
    },
  );
  const summary = diffDatabases(left, right, { maxBytes: 100_000, summaryOnly: true });
  assert.deepEqual(
    summary.tables.map((t) => [t.table, t.status, t.rightCount]),
    [
      ['big', 'changed', 200],
      ['small', 'changed', 1],
    ],
  );
  const small = diffDatabases(left, right, { maxBytes: 100_000, tables: ['small'] });
  assert.deepEqual(
    small.tables.map((t) => [t.table, t.added.length]),
    [['small', 1]],
  );
  assert.deepEqual(
    small.schema.map((c) => `${c.change} ${c.type} ${c.name}`),
    ['added index small_id_v'],
    "only the table's own schema changes",
  );
  assert.equal(diffDatabases(left, right).tables.find((t) => t.table === 'big')?.added.length, 200, 'no cap: all');
  assert.throws(() => diffDatabases(left, right, { tables: ['nope'] }), { code: 'NOT_FOUND' });
});
