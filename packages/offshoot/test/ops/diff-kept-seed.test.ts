// The seed's side of a diff is read once and kept: an eval loop diffs fork after fork against one checkpoint, whose
// per-chain cache entry never changes, so its entry, schema and table shapes are read by the first diff only. An
// entry replaced on disk (another inode or mtime) is never answered from what was kept of the old file.
import assert from 'node:assert/strict';
import {
  chmodSync,
  copyFileSync,
  readFileSync,
  readdirSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { diff } from '../../src/ops/diff.js';
import { fork } from '../../src/ops/fork.js';
import { keptEntryReads } from '../../src/ops/helpers/chain/kept-entries.js';
import { chainCacheDir } from '../../src/ops/helpers/context/paths.js';
import { keptSideReads } from '../../src/sqlite/diff/kept-side.js';
import { fingerprintOf } from '../../src/sqlite/checkout-sidecar.js';
import { openTestStore, type TestStore } from './harness.js';
import { query, runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };

/** A seed checkpoint of two tables (one indexed), and a fork `name` of it with `sql` run and checkpointed. */
async function seeded(ts: TestStore): Promise<void> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(
    co.path,
    'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t(v);' +
      'CREATE TABLE u(k TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;' +
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO t(v) SELECT 'row ' || i FROM n;" +
      "INSERT INTO u VALUES ('a', 1), ('b', 2);",
  );
  await checkpoint(ts.ctx, MAIN, 'seed');
}

async function forked(ts: TestStore, name: string, sql: string): Promise<void> {
  await fork(ts.ctx, MAIN, name, { at: 'seed' });
  runSql((await checkout(ts.ctx, { db: 'app', branch: name })).path, sql);
  await checkpoint(ts.ctx, { db: 'app', branch: name }, 'wrote');
}

/** The seed as an episode names it: the state the fork was made from. */
function forkPoint(name: string) {
  return { db: 'app', branch: name, checkpoint: 'fork' };
}

function counts(d: Awaited<ReturnType<typeof diff>>, table: string): [number | undefined, number | undefined] {
  const t = d.tables.find((x) => x.table === table);
  return [t?.leftCount, t?.rightCount];
}

/** The seed's per-chain cache entry: the one holding table t (the other is the empty database main was created as). */
function seedEntry(ts: TestStore): string {
  const dir = chainCacheDir(ts.dir, 'app');
  const dbs = readdirSync(dir)
    .filter((n) => n.endsWith('.db'))
    .map((n) => path.join(dir, n))
    .filter((p) => query(p, "SELECT count(*) FROM sqlite_schema WHERE name = 't'").trim() === '1');
  assert.equal(dbs.length, 1, `one cache entry holds the seed: ${dbs.join(', ')}`);
  return dbs[0] as string;
}

/** Puts `from`'s bytes at `entry` as a new file (another inode), and records its fingerprint as the entry's own. */
function replaceEntry(entry: string, from: string, mtime?: Date): void {
  const tmp = `${entry}.replacing`;
  copyFileSync(from, tmp);
  if (mtime !== undefined) utimesSync(tmp, mtime, mtime);
  renameSync(tmp, entry);
  const json = entry.replace(/\.db$/, '.json');
  const meta = JSON.parse(readFileSync(json, 'utf8')) as { fingerprint: unknown };
  meta.fingerprint = fingerprintOf(entry);
  writeFileSync(json, JSON.stringify(meta) + '\n');
}

describe('the seed side of a diff, kept', () => {
  it('a second diff against the same seed reads neither its entry, its schema nor its table shapes again', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await forked(
        ts,
        'f',
        "INSERT INTO t(v) VALUES ('x'); DELETE FROM t WHERE id = 5; UPDATE u SET n = 3 WHERE k = 'a';",
      );
      await forked(ts, 'g', "INSERT INTO t(v) VALUES ('y'), ('z');");
      const first = await diff(ts.ctx, forkPoint('f'), { db: 'app', branch: 'f' }, { summaryOnly: true });
      assert.deepEqual(counts(first, 't'), [2000, 2000]);
      assert.equal(first.tables.find((x) => x.table === 't')?.status, 'changed');
      const entries = keptEntryReads();
      const side = keptSideReads();
      const again = await diff(ts.ctx, forkPoint('f'), { db: 'app', branch: 'f' }, { summaryOnly: true });
      const other = await diff(ts.ctx, forkPoint('g'), { db: 'app', branch: 'g' });
      assert.equal(keptEntryReads(), entries, "the seed's cache entry is not read again");
      assert.deepEqual(keptSideReads(), side, "the seed's schema and table shapes are not read again");
      assert.deepEqual(again.tables, first.tables);
      assert.equal(
        again.stats.tablesCounted,
        1,
        "only the fork's WITHOUT ROWID table is counted: t's count follows from the seed's",
      );
      assert.deepEqual(counts(other, 't'), [2000, 2002]);
      assert.deepEqual(
        other.tables.find((x) => x.table === 't')?.added.map((r) => r.v),
        ['y', 'z'],
      );
      assert.equal(other.tables.find((x) => x.table === 'u')?.status, 'same');
      assert.equal(first.tables.find((x) => x.table === 'u')?.status, 'changed');
    } finally {
      await ts.cleanup();
    }
  });

  it('an entry replaced on disk is read anew: the diff shows the new file, never what was kept of the old', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await forked(ts, 'f', "INSERT INTO t(v) VALUES ('x');");
      const right = { db: 'app', branch: 'f' };
      assert.deepEqual(counts(await diff(ts.ctx, forkPoint('f'), right, { summaryOnly: true }), 't'), [2000, 2001]);
      const entry = seedEntry(ts);

      // The same bytes as a new file with the old mtime: only the inode differs, and that alone is a new file.
      const same = ts.tmpPath('same.db');
      copyFileSync(entry, same);
      const { mtime } = statSync(entry);
      const entries = keptEntryReads();
      const side = keptSideReads();
      replaceEntry(entry, same, mtime);
      assert.deepEqual(counts(await diff(ts.ctx, forkPoint('f'), right, { summaryOnly: true }), 't'), [2000, 2001]);
      assert.equal(keptEntryReads(), entries + 1, 'the replaced entry is read again');
      assert.ok(keptSideReads().catalogs > side.catalogs, "the replaced entry's schema is read again");

      // Other content at the entry's path: the diff reads it (its row count, its schema), not the kept seed's.
      const other = ts.tmpPath('other.db');
      copyFileSync(entry, other);
      chmodSync(other, 0o644);
      runSql(other, 'PRAGMA journal_mode = DELETE; DELETE FROM t WHERE id > 1500; CREATE TABLE w(x);');
      replaceEntry(entry, other);
      const d = await diff(ts.ctx, forkPoint('f'), right, { summaryOnly: true });
      assert.equal(counts(d, 't')[0], 1500, 'the left count is the new file');
      assert.deepEqual(
        d.schema.map((c) => `${c.change} ${c.name}`),
        ['removed w'],
        "the left schema is the new file's",
      );
    } finally {
      await ts.cleanup();
    }
  });
});
