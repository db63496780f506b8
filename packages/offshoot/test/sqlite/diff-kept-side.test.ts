// A diff given what earlier diffs kept of its left file (schema, table shapes, row counts, page placements) answers
// exactly as one that reads the file afresh, for every shape of diff, and the second such diff reads less.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import type { DiffOptions, DiffResult } from '../../src/sqlite/diff/diff-types.js';
import { keptSideOf, keptSideReads } from '../../src/sqlite/diff/kept-side.js';
import { firstRows } from '../../src/sqlite/diff/row-window.js';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { changedPages as changedPagesOf, forkFile } from './file-forks.js';

let dir: string;
let base: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  base = path.join(dir, 'base.db');
  const db = openDatabase(base);
  db.pragma('journal_mode = DELETE');
  db.pragma('synchronous = OFF');
  db.exec('BEGIN');
  for (let t = 0; t < 3; t++) {
    db.exec(`CREATE TABLE t${t}(id INTEGER PRIMARY KEY, name TEXT, payload BLOB)`);
    db.exec(`CREATE INDEX t${t}_name ON t${t}(name)`);
    db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 3000)
             INSERT INTO t${t}(id, name, payload) SELECT i, printf('row-%06d', i), randomblob(100) FROM s`);
  }
  db.exec("CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID; INSERT INTO kv VALUES ('a', '1'), ('b', '2');");
  db.exec('COMMIT');
  db.close();
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const fork = (name: string, sql: string): string => forkFile(base, dir, name, sql);
const changedPages = (a: string, b: string): Set<number> => changedPagesOf(a, b, 4096);

/** The result without its work counters, which say how much was read, not what was found. */
function found(d: DiffResult): Omit<DiffResult, 'stats'> & { narrowed: boolean } {
  const { stats, ...rest } = d;
  return { ...rest, narrowed: stats.narrowed };
}

const FORKS: Record<string, string> = {
  rows: "INSERT INTO t0(name) VALUES ('new-1'), ('new-2'); UPDATE t1 SET name = 'changed' WHERE id = 7; DELETE FROM t2 WHERE id = 9;",
  schema:
    "ALTER TABLE t1 ADD COLUMN extra INTEGER DEFAULT 5; CREATE INDEX t0_payload ON t0(payload); UPDATE kv SET v = '3' WHERE k = 'a';",
  dropped: "DROP TABLE t2; INSERT INTO kv VALUES ('c', '3');",
};

const SHAPES: Record<string, DiffOptions> = {
  summary: { summaryOnly: true },
  'full rows': {},
  'row window': { rows: firstRows(1) },
  'tables filter': { tables: ['t0', 'kv'] },
  'summary, tables filter': { summaryOnly: true, tables: ['t1'] },
};

test('a diff with its left side kept finds exactly what a fresh one finds, for every shape', () => {
  for (const [forkName, sql] of Object.entries(FORKS)) {
    const right = fork(forkName, sql);
    const changed = changedPages(base, right);
    for (const [shapeName, opts] of Object.entries(SHAPES)) {
      const what = `${forkName}, ${shapeName}`;
      // A fresh kept side per case: the copy's path is the same each time, and its content the same base.
      const kept = keptSideOf(base, `${forkName}/${shapeName}`);
      const fresh = diffDatabases(base, right, { ...opts, changedPages: changed });
      const cold = diffDatabases(base, right, { ...opts, changedPages: changed, leftKept: kept });
      const warm = diffDatabases(base, right, { ...opts, changedPages: changed, leftKept: kept });
      const whole = diffDatabases(base, right, { ...opts, leftKept: kept });
      assert.deepEqual(found(cold), found(fresh), `${what}: the first kept diff`);
      assert.deepEqual(found(warm), found(fresh), `${what}: the second kept diff`);
      const wholeFresh = diffDatabases(base, right, opts);
      assert.deepEqual(found(whole), found(wholeFresh), `${what}: an unnarrowed diff through the same kept side`);
      if (opts.summaryOnly === true)
        assert.deepEqual(
          { ...found(warm), narrowed: false },
          found(wholeFresh),
          `${what}: a narrowed summary's statuses and counts are those of a diff of every row`,
        );
      assert.ok(fresh.stats.narrowed, `${what}: the diff was narrowed by the changed pages`);
    }
  }
});

test('the second diff against a kept side reads no schema, no table shape, and fewer pages', () => {
  const right = fork('second', "INSERT INTO t0(name) VALUES ('x'); UPDATE t1 SET name = 'y' WHERE id = 2000;");
  const changed = changedPages(base, right);
  const kept = keptSideOf(base, 'second');
  const first = diffDatabases(base, right, { changedPages: changed, leftKept: kept });
  const reads = keptSideReads();
  const second = diffDatabases(base, right, { changedPages: changed, leftKept: kept });
  assert.deepEqual(keptSideReads(), reads, 'neither the schema nor a table shape of the left is read again');
  assert.ok(
    second.stats.pagesRead < first.stats.pagesRead,
    `the left's page placements are kept: ${second.stats.pagesRead} pages read, against ${first.stats.pagesRead}`,
  );
  assert.deepEqual(found(second), found(first));
});

test('a kept side is per file content: another file, or the same path changed, gets its own', () => {
  const a = keptSideOf(base, 'state');
  assert.equal(keptSideOf(base, 'state'), a, 'the same file in the same state: the same kept side');
  assert.notEqual(keptSideOf(base, 'other state'), a);
  const copy = path.join(dir, 'copy.db');
  fs.copyFileSync(base, copy);
  assert.notEqual(keptSideOf(copy, 'state'), keptSideOf(base, 'state'));
  const b = keptSideOf(copy, 'state');
  fs.appendFileSync(copy, Buffer.alloc(4096));
  assert.notEqual(keptSideOf(copy, 'state'), b, 'a file grown at the same path is another file');
});
