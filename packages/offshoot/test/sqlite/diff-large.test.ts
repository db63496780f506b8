// A diff of a few hundred thousand changed rows renders as text and as SQL: each is built line by line, never by
// spreading a table's lines into one call's arguments (past ~120,000 of them V8 throws "Maximum call stack size
// exceeded", which the CLI reported as INTERNAL).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { renderDiffText } from '../../src/sqlite/diff/diff-format.js';
import { renderDiffSql } from '../../src/sqlite/diff/diff-sql.js';
import type { DiffResult } from '../../src/sqlite/diff/diff-types.js';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';

const ROWS = 200_000;
let dir: string;
let result: DiffResult;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-diff-large-'));
  const left = path.join(dir, 'l.db');
  const right = path.join(dir, 'r.db');
  const db = openDatabase(left);
  db.exec(
    'CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER);' +
      `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS}) INSERT INTO t SELECT x, x FROM c;`,
  );
  db.close();
  fs.copyFileSync(left, right);
  const r = openDatabase(right);
  r.exec('UPDATE t SET v = v + 1;');
  r.close();
  result = diffDatabases(left, right);
  assert.equal(result.tables.find((t) => t.table === 't')?.changed.length, ROWS);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the text of a diff lists every one of 200,000 changed rows', () => {
  const lines = renderDiffText(result, 'app', 'app@big').split('\n');
  assert.equal(lines.filter((l) => l.startsWith('  ~ ')).length, ROWS);
  assert.equal(lines[1], `table t (key id): changed, 0 added, 0 removed, ${ROWS} changed`);
  assert.equal(lines[2], '  ~ id=1  v: 1 -> 2');
});

test('the SQL of a diff holds one UPDATE for each of 200,000 changed rows', () => {
  const lines = renderDiffSql(result).split('\n');
  assert.equal(lines.filter((l) => l.startsWith('UPDATE "t" SET "v" = ')).length, ROWS);
  assert.equal(lines.at(-2), 'COMMIT;');
});
