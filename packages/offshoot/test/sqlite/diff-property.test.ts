// Property: on random workloads (inserts, updates with overflowing blobs, deletes, schema changes, VACUUM) on both
// sides of a common base, the diff narrowed to changed pages (and, within tables, to the rows on changed pages)
// says exactly what the full table compare says, row for row, in every output format.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { changedPages as changedPagesOf } from './file-forks.js';
import type { SqliteDatabase } from '../../src/sqlite/sqlite-database.js';
import { diffDatabases } from '../../src/sqlite/diff/diff-databases.js';
import { renderDiffSummary, renderDiffText } from '../../src/sqlite/diff/diff-format.js';
import { diffToJson } from '../../src/sqlite/diff/diff-json.js';
import { renderDiffSql } from '../../src/sqlite/diff/diff-sql.js';
import { Prng } from '../ops/prng.js';

const SEEDS = Number(process.env.OFFSHOOT_DIFF_PROPERTY_SEEDS ?? 16);
const PAGE = 1024;
let dir: string;
let base: string;

function blob(rng: Prng, big: boolean): Buffer {
  const n = big ? rng.int(PAGE, 4 * PAGE) : rng.int(0, 200);
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
  return b;
}

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-diffprop-'));
  base = path.join(dir, 'base.db');
  const db = openDatabase(base);
  db.pragma(`page_size = ${PAGE}`);
  db.pragma('journal_mode = DELETE');
  db.pragma('synchronous = OFF');
  db.exec(`CREATE TABLE ipk(id INTEGER PRIMARY KEY, name TEXT, body BLOB);
    CREATE TABLE plain(name TEXT, body BLOB);
    CREATE TABLE keyed(k TEXT PRIMARY KEY, v INTEGER);
    CREATE TABLE wr(k INTEGER PRIMARY KEY, v TEXT) WITHOUT ROWID;
    CREATE INDEX ipk_name ON ipk(name);`);
  const rng = new Prng(7);
  db.exec('BEGIN');
  for (let i = 0; i < 600; i++) {
    db.prepare('INSERT INTO ipk(name, body) VALUES (?, ?)').run(`n${i}`, blob(rng, i % 9 === 0));
    db.prepare('INSERT INTO plain VALUES (?, ?)').run(`p${i}`, blob(rng, i % 13 === 0));
    db.prepare('INSERT INTO keyed VALUES (?, ?)').run(`k${i}`, i);
    db.prepare('INSERT INTO wr VALUES (?, ?)').run(i, `w${i}`);
  }
  db.exec('COMMIT');
  db.close();
});

after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** One random step of a workload. */
function step(db: SqliteDatabase, rng: Prng): void {
  const id = rng.int(1, 700);
  switch (rng.int(0, 11)) {
    case 0:
    case 1:
      db.prepare('INSERT INTO ipk(name, body) VALUES (?, ?)').run(`x${rng.int(0, 1e6)}`, blob(rng, rng.chance(0.4)));
      break;
    case 2:
    case 3:
      db.prepare('UPDATE ipk SET body = ? WHERE id = ?').run(blob(rng, rng.chance(0.5)), id);
      break;
    case 4:
      db.prepare('UPDATE plain SET body = ? WHERE rowid = ?').run(blob(rng, rng.chance(0.5)), id);
      break;
    case 5:
      db.prepare('DELETE FROM ipk WHERE id BETWEEN ? AND ?').run(id, id + rng.int(0, 40));
      break;
    case 6:
      db.prepare('DELETE FROM plain WHERE rowid BETWEEN ? AND ?').run(id, id + rng.int(0, 60));
      break;
    case 7:
      db.prepare('UPDATE keyed SET v = v + 1 WHERE k = ?').run(`k${id}`);
      db.prepare('INSERT OR REPLACE INTO wr VALUES (?, ?)').run(id, `r${rng.int(0, 99)}`);
      break;
    case 8:
      db.prepare('UPDATE ipk SET name = ? WHERE id = ?').run(`e${rng.int(0, 99)}`, id);
      break;
    case 9: {
      const cols = (db.prepare('SELECT count(*) FROM pragma_table_info(?)').pluck().get('plain') as number) ?? 0;
      if (cols < 5) db.exec(`ALTER TABLE plain ADD COLUMN c${cols} INTEGER DEFAULT ${rng.int(0, 9)}`);
      else db.exec('CREATE TABLE IF NOT EXISTS extra(a, b); INSERT INTO extra VALUES (1, 2)');
      break;
    }
    case 10:
      db.exec(rng.chance(0.5) ? 'CREATE INDEX IF NOT EXISTS plain_name ON plain(name)' : 'DROP TABLE IF EXISTS extra');
      break;
    default:
      db.exec('VACUUM');
  }
}

function workload(name: string, rng: Prng, steps: number): string {
  const file = path.join(dir, `${name}.db`);
  fs.copyFileSync(base, file);
  const db = openDatabase(file);
  db.pragma('synchronous = OFF');
  for (let i = 0; i < steps; i++) step(db, rng);
  db.close();
  return file;
}

const changedPages = (a: string, b: string): Set<number> => changedPagesOf(a, b, PAGE);

// Tables the narrowed diff does not read are reported without row counts, and the cost statistics differ;
// everything else, counts of the tables it compares included, must not.
const withoutCounts = (text: string): string => text.replace(/, rows \S+ -> \S+/g, '');
function jsonRows(j: unknown, counts: Set<string>): string {
  return JSON.stringify(j, function (this: Record<string, unknown>, k, v) {
    if (k === 'stats') return undefined;
    if ((k === 'left_count' || k === 'right_count') && !counts.has(String(this.table))) return undefined;
    return typeof v === 'bigint' ? `${v}n` : v;
  });
}

test('the narrowed diff equals the full table compare on random workloads, in every format', () => {
  let narrowedRows = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const rng = new Prng(seed * 7919);
    const left = seed % 3 === 0 ? base : workload(`l${seed}`, rng, rng.int(0, 6));
    const right = workload(`r${seed}`, rng, rng.int(1, 12));
    const pages = changedPages(left, right);
    const fast = diffDatabases(left, right, { changedPages: pages });
    const full = diffDatabases(left, right);
    const at = `seed ${seed}`;
    assert.equal(renderDiffSql(fast), renderDiffSql(full), `${at}: --sql`);
    assert.equal(
      withoutCounts(renderDiffText(fast, 'L', 'R')),
      withoutCounts(renderDiffText(full, 'L', 'R')),
      `${at}: text`,
    );
    const counted = new Set(fast.tables.filter((t) => t.leftCount !== undefined).map((t) => t.table));
    for (const t of fast.tables.filter((x) => x.status !== 'same'))
      assert.ok(counted.has(t.table), `${at}: a differing table ${t.table} has its counts`);
    assert.equal(jsonRows(diffToJson(fast), counted), jsonRows(diffToJson(full), counted), `${at}: --json`);
    const fastSummary = diffDatabases(left, right, { changedPages: pages, summaryOnly: true });
    const fullSummary = diffDatabases(left, right, { summaryOnly: true });
    assert.equal(renderDiffSummary(fastSummary, 'L', 'R'), renderDiffSummary(fullSummary, 'L', 'R'), `${at}: summary`);
    if (fast.stats.rowsScanned < full.stats.rowsScanned) narrowedRows++;
    for (const f of [left, right]) if (f !== base) fs.rmSync(f);
  }
  assert.ok(narrowedRows > 0, 'some workloads were diffed from the changed rows alone');
});
