// TEXT holding a NUL byte reads whole in every text encoding, on runtimes whose node:sqlite cuts text at a NUL (Node
// 22) as on those that do not: through the shared select list, and so through the row diff and its fill values.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { wholeTextSelect } from '../../src/sqlite/whole-text.js';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const ENCODINGS = ['UTF-8', 'UTF-16le', 'UTF-16be'];

/** A new database file in `encoding`, set up by `sql`. */
function made(name: string, encoding: string, sql: string): string {
  const file = path.join(dir, `${name}-${encoding}.db`);
  const db = openDatabase(file);
  db.exec(`PRAGMA encoding = '${encoding}'; ${sql}`);
  db.close();
  return file;
}

// Text is built with char(0) in SQL, never bound, so it is stored whole in the file's own encoding.
const STORED = `CREATE TABLE t(id INTEGER PRIMARY KEY, v);
  INSERT INTO t VALUES (1, 'a' || char(0) || 'b'), (2, char(0)), (3, 'é' || char(0) || '😀'),
    (4, 'plain'), (5, X'0061'), (6, NULL), (7, 7), (8, 'a' || char(0));`;
const EXPECTED = ['a\0b', '\0', 'é\0😀', 'plain', Buffer.from([0, 0x61]), null, 7n, 'a\0'];

test('the select list reads text holding a NUL whole in UTF-8, UTF-16le and UTF-16be, other values as they are', () => {
  for (const encoding of ENCODINGS) {
    const db = openDatabase(made('stored', encoding, STORED), { readonly: true });
    try {
      db.defaultSafeIntegers(true);
      assert.equal(db.pragma('encoding', { simple: true }), encoding);
      const select = wholeTextSelect(db, ['"v"']);
      const rows = db.prepare(`SELECT ${select.list} FROM t ORDER BY id`).raw().all() as unknown[][];
      assert.deepEqual(
        rows.map((r) => (select.values?.(r) ?? r)[0]),
        EXPECTED,
        encoding,
      );
    } finally {
      db.close();
    }
  }
});

test('the row diff tells texts apart after a NUL, in keys and values, in every encoding', () => {
  const setup = `CREATE TABLE kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
    INSERT INTO kv VALUES ('k' || char(0) || 'x', 'a' || char(0) || 'b'), ('k' || char(0) || 'y', 1);`;
  for (const encoding of ENCODINGS) {
    const left = made('left', encoding, setup);
    const right = made(
      'right',
      encoding,
      `${setup} UPDATE kv SET v = 'a' || char(0) || 'c' WHERE k = 'k' || char(0) || 'x';
        INSERT INTO kv VALUES ('k' || char(0) || 'z', char(0));`,
    );
    const kv = diffDatabases(left, right).tables.find((t) => t.table === 'kv');
    assert.equal(kv?.status, 'changed', encoding);
    assert.deepEqual(kv?.changed, [
      { key: { k: 'k\0x' }, before: { k: 'k\0x', v: 'a\0b' }, after: { k: 'k\0x', v: 'a\0c' } },
    ]);
    assert.deepEqual(kv?.added, [{ k: 'k\0z', v: '\0' }]);
    assert.deepEqual(kv?.removed, []);
  }
});

test("a column added with a NUL-bearing DEFAULT leaves the carried rows unchanged: the fill is the default's whole text", () => {
  const left = made('fill-left', 'UTF-8', "CREATE TABLE t(id INTEGER PRIMARY KEY, a); INSERT INTO t VALUES (1, 'x');");
  const right = made(
    'fill-right',
    'UTF-8',
    `CREATE TABLE t(id INTEGER PRIMARY KEY, a); INSERT INTO t VALUES (1, 'x');
      ALTER TABLE t ADD COLUMN b DEFAULT (CAST(X'610062' AS TEXT));`,
  );
  const t = diffDatabases(left, right).tables.find((d) => d.table === 't');
  assert.deepEqual(t?.changed, []);
  assert.deepEqual([t?.added, t?.removed], [[], []]);
});
