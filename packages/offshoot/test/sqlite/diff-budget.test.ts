// A diff keeps at most maxBytes of rows (as JSON): past it, TOO_LARGE naming the narrower requests, which answer.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { hasCode, hintFor, type OffshootError } from '../../src/core/errors.js';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { firstRows } from '../../src/sqlite/diff/row-window.js';

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
      'CREATE INDEX small_v ON small(v); CREATE INDEX big_b ON big(b);' +
      'CREATE TABLE wide(id INTEGER PRIMARY KEY, b BLOB);' +
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200) INSERT INTO wide SELECT x, randomblob(1000) FROM c;',
  );
  db.close();
  fs.copyFileSync(left, right);
  const r = openDatabase(right);
  r.exec(
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200) INSERT INTO big SELECT x, randomblob(1000) FROM c; INSERT INTO small VALUES (1, 'one'); DROP INDEX big_b; CREATE INDEX small_id_v ON small(id, v);" +
      'UPDATE wide SET b = randomblob(1000);',
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
      assert.match(err.hint ?? '', /--limit/);
      return true;
    },
  );
  const summary = diffDatabases(left, right, { maxBytes: 100_000, summaryOnly: true });
  assert.deepEqual(
    summary.tables.map((t) => [t.table, t.status, t.rightCount]),
    [
      ['big', 'changed', 200],
      ['small', 'changed', 1],
      ['wide', 'changed', 200],
    ],
  );
  const small = diffDatabases(left, right, { maxBytes: 100_000, tables: ['small'] });
  assert.deepEqual(
    small.tables.map((t) => [t.table, t.added.length]),
    [['small', 1]],
  );
  assert.equal(small.tables[0]?.counts, undefined, 'every row change listed: no counts beside the rows');
  assert.deepEqual(
    small.schema.map((c) => `${c.change} ${c.type} ${c.name}`),
    ['added index small_id_v'],
    "only the table's own schema changes",
  );
  assert.equal(diffDatabases(left, right).tables.find((t) => t.table === 'big')?.added.length, 200, 'no cap: all');
  assert.throws(() => diffDatabases(left, right, { tables: ['nope'] }), { code: 'NOT_FOUND' });
});

const CAP = 300_000;

/** The TOO_LARGE a diff fails with (asserting that it does). */
function tooLarge(run: () => unknown): OffshootError {
  let caught: unknown;
  try {
    run();
  } catch (err) {
    caught = err;
  }
  assert.ok(hasCode(caught, 'TOO_LARGE'), `expected TOO_LARGE, got ${String(caught)}`);
  return caught;
}

test('the count TOO_LARGE reports is of row changes kept: never more than the table holds', () => {
  // 200 rows, every one changed (before and after both kept): the cap is passed part-way through them.
  const err = tooLarge(() => diffDatabases(left, right, { maxBytes: CAP, tables: ['wide'] }));
  const kept = Number(/(\d+) row changes kept/.exec(err.message)?.[1]);
  assert.ok(kept > 0 && kept <= 200, `${kept} row changes of a 200-row table: ${err.message}`);
  assert.match(err.message, /table "wide"/);
});

test('narrowed to the table that passes the cap, the hints name what is left, per surface, never the same table', () => {
  const err = tooLarge(() => diffDatabases(left, right, { maxBytes: CAP, tables: ['wide'] }));
  assert.doesNotMatch(err.hint ?? '', /--table/, 'the option that just failed');
  assert.match(err.hint ?? '', /--limit/);
  assert.match(err.hint ?? '', /--summary/);
  const agent = hintFor(err, 'agent') ?? '';
  assert.match(agent, /\blimit\b/);
  assert.match(agent, /summary: true/);
  assert.doesNotMatch(agent, /--|diff /, 'an agent is told tool arguments, not CLI flags');
  const sdk = hintFor(err, 'sdk') ?? '';
  assert.match(sdk, /"limit"/);
  assert.match(sdk, /"summary": true/);
  assert.doesNotMatch(sdk, /"table"/);
  const limited = tooLarge(() => diffDatabases(left, right, { maxBytes: 1000, rows: firstRows(5) }));
  assert.match(limited.hint ?? '', /a smaller --limit than 5/);
  assert.match(hintFor(limited, 'agent') ?? '', /a smaller limit than 5/);
  const sql = tooLarge(() => diffDatabases(left, right, { maxBytes: CAP, forSql: true }));
  assert.doesNotMatch(sql.hint ?? '', /--limit|--summary/, 'SQL needs every row: no limit, no counts-only, help it');
  assert.match(sql.hint ?? '', /--table/);
});

test('with a row limit the cap bounds what is kept, not what is compared: the diff answers with true counts', () => {
  const r = diffDatabases(left, right, { maxBytes: CAP, rows: firstRows(5) });
  const wide = r.tables.find((t) => t.table === 'wide');
  const big = r.tables.find((t) => t.table === 'big');
  assert.equal(wide?.status, 'changed');
  assert.deepEqual(wide?.counts, { added: 0, removed: 0, changed: 200 });
  assert.equal(wide?.changed.length, 5);
  assert.deepEqual(
    wide?.changed.map((c) => Number(c.key['id'])),
    [1, 2, 3, 4, 5],
  );
  assert.deepEqual(big?.counts, { added: 200, removed: 0, changed: 0 });
  assert.equal(big?.added.length, 5);
  assert.deepEqual([wide?.leftCount, wide?.rightCount], [200, 200], 'row counts are the whole table');
  const none = diffDatabases(left, right, { maxBytes: 1, rows: firstRows(0) });
  assert.deepEqual(none.tables.find((t) => t.table === 'wide')?.counts, { added: 0, removed: 0, changed: 200 });
  assert.equal(none.tables.find((t) => t.table === 'wide')?.status, 'changed', 'a status without a row kept');
});

test('a window keeps the row changes of one kind from an offset, in key order', () => {
  const r = diffDatabases(left, right, { tables: ['wide'], rows: { changed: { offset: 10, limit: 3 } } });
  const wide = r.tables[0];
  assert.deepEqual(
    wide?.changed.map((c) => Number(c.key['id'])),
    [11, 12, 13],
  );
  assert.equal(wide?.counts?.changed, 200);
});
