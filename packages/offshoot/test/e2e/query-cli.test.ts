// `offshoot query` through ./offshoot: the checkout, a checkpoint and the durable head, --limit, --json, and the
// refusals with their exit codes as one clean stderr line.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertCleanError, ensureBuilt, sql, tempStore, type TempStore } from './cli-harness.js';

let ts: TempStore;

before(() => {
  ensureBuilt();
  ts = tempStore({ init: true });
  ts.run(['create', 'app']);
  const db = ts.run(['checkout', 'app']).stdout.trim();
  sql(
    db,
    "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT, raw BLOB); INSERT INTO notes VALUES (1, 'kept', x'0102');",
  );
  ts.run(['checkpoint', 'app', 'one']);
  sql(db, "INSERT INTO notes VALUES (2, 'unsaved', NULL);");
});

after(() => ts.cleanup());

test('prints the columns, then a row per line, reading the checkout so unsaved writes show', () => {
  const r = ts.run(['query', 'app', 'SELECT id, body FROM notes ORDER BY id']);
  assert.equal(r.stdout, 'id | body\n1 | "kept"\n2 | "unsaved"\n');
  assert.match(r.stderr, /app@main \(checkout\): 2 row\(s\)/);
});

test('a checkpoint is read from its immutable copy; --limit cuts and says so', () => {
  assert.equal(ts.run(['query', 'app@main@one', 'SELECT count(*) FROM notes']).stdout, 'count(*)\n1\n');
  const cut = ts.run(['query', 'app', 'SELECT id FROM notes ORDER BY id', '--limit', '1']);
  assert.equal(cut.stdout, 'id\n1\n');
  assert.match(cut.stderr, /cut at the limit/);
});

test('--json prints one document with the rows as values, BLOBs summarised', () => {
  const doc = ts.json<{ source: string; columns: string[]; rows: unknown[][]; truncated: boolean; at?: string }>([
    'query',
    'app@main@one',
    'SELECT id, raw FROM notes',
    '--json',
  ]);
  assert.equal(doc.source, 'checkpoint');
  assert.equal(doc.at, 'one');
  assert.deepEqual(doc.columns, ['id', 'raw']);
  assert.deepEqual(doc.rows, [[1, { blob: 2, hex: '0102', sha256: 'a12871fee210fb86' }]]);
  assert.equal(doc.truncated, false);
});

test('a write, a bad limit, a missing branch and a missing argument are refused cleanly', () => {
  assertCleanError(ts.run(['query', 'app', 'DROP TABLE notes'], { expectCode: 2 }), 2, /query refused/);
  assertCleanError(ts.run(['query', 'app', 'SELECT 1', '--limit', 'ten'], { expectCode: 2 }), 2, /whole number/);
  assertCleanError(ts.run(['query', 'app', 'SELECT 1', '--limit', '5000'], { expectCode: 2 }), 2, /out of range/);
  assertCleanError(ts.run(['query', 'app@nope', 'SELECT 1'], { expectCode: 3 }), 3, /nope/);
  assertCleanError(ts.run(['query', 'app'], { expectCode: 2 }), 2);
  assert.equal(ts.run(['query', 'app', 'SELECT count(*) FROM notes']).stdout, 'count(*)\n2\n', 'nothing was dropped');
});
