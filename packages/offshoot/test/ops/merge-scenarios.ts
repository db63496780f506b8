// The merge verb's scenarios, run against a local store (merge.test.ts) and the S3 test server (merge-s3.test.ts):
// real SQLite files written by the stock sqlite3 CLI, every outcome read back from the store as a `.dump`.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Target } from '../../src/core/target.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { exportTo } from '../../src/ops/export.js';
import { fork } from '../../src/ops/fork.js';
import { readLog } from '../../src/ops/log.js';
import { merge, mergeToJson, previewMerge, type ResolvedRow } from '../../src/ops/merge.js';
import { promote } from '../../src/ops/promote.js';
import { setProtected } from '../../src/ops/protect.js';
import { exportDump, rejectsCode, type TestStore } from './harness.js';
import { Prng } from './prng.js';
import { dump, runSql } from './sqlite-cli.js';

const MAIN: Target = { db: 'app', branch: 'main' };
const A: Target = { db: 'app', branch: 'a' };
const B: Target = { db: 'app', branch: 'b' };

const SCHEMA =
  'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);' +
  'CREATE TABLE w(k TEXT, n INTEGER, v TEXT, PRIMARY KEY(k, n)) WITHOUT ROWID;' +
  'CREATE TABLE nopk(a TEXT, b INTEGER);' +
  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 40) INSERT INTO t(id, v) SELECT i, 'row ' || i FROM s;" +
  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 40) INSERT INTO w SELECT 'k' || (i % 4), i, 'w ' || i FROM s;" +
  "INSERT INTO nopk VALUES ('x', 1), ('y', 2);";

/** Creates app@main (unprotected) with the seed tables (checkpoint `seed`), and forks `a` and `b` of it. */
async function seeded(ts: TestStore): Promise<void> {
  await create(ts.ctx, 'app');
  await setProtected(ts.ctx, MAIN, false);
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, SCHEMA);
  await checkpoint(ts.ctx, MAIN, 'seed');
  await fork(ts.ctx, MAIN, 'a');
  await fork(ts.ctx, MAIN, 'b');
}

/** Writes SQL into a branch's checkout through the sqlite3 CLI and checkpoints it. */
async function write(ts: TestStore, t: Target, sql: string, name?: string): Promise<void> {
  const co = await checkout(ts.ctx, t);
  runSql(co.path, sql);
  await checkpoint(ts.ctx, t, name);
}

/** The `.dump` of the seed with the scripts applied in order, each through the sqlite3 CLI. */
async function seedThen(ts: TestStore, scripts: readonly string[]): Promise<string> {
  const file = ts.tmpPath('expected.db');
  await exportTo(ts.ctx, { ...MAIN, checkpoint: 'seed' }, file, { force: true });
  for (const s of scripts) runSql(file, s);
  return dump(file);
}

/** Random row changes of t and w whose keys are `side`'s own (even or odd ids, inserts in disjoint ranges). */
function disjointChanges(rng: Prng, side: 0 | 1): string {
  const out: string[] = [];
  const ids = Array.from({ length: 20 }, (_, i) => 2 * i + 1 + side).filter((id) => id <= 40);
  for (const id of ids) {
    const roll = rng.int(0, 5);
    if (roll === 0) out.push(`DELETE FROM t WHERE id = ${id};`);
    else if (roll === 1) out.push(`UPDATE t SET v = 'v${rng.int(0, 999)}' WHERE id = ${id};`);
  }
  for (let i = 0; i < rng.int(0, 4); i++) out.push(`INSERT INTO t VALUES (${1000 * (side + 1) + i}, 'new ${i}');`);
  for (const n of ids) {
    const roll = rng.int(0, 6);
    if (roll === 0) out.push(`DELETE FROM w WHERE n = ${n};`);
    else if (roll === 1) out.push(`UPDATE w SET v = x'${rng.int(16, 255).toString(16)}' WHERE n = ${n};`);
  }
  if (rng.chance(0.5)) out.push(`INSERT INTO w VALUES ('side${side}', ${rng.int(0, 9)}, NULL);`);
  return out.join('\n');
}

/** Registers every merge scenario on stores `open` makes. */
export function mergeScenarios(open: () => Promise<TestStore>, seeds: readonly number[]): void {
  for (const seed of seeds) {
    it(`disjoint changes merge to what applying both gives, in either order (seed ${seed})`, async () => {
      const ts = await open();
      try {
        await seeded(ts);
        const rng = new Prng(seed);
        const ours = disjointChanges(rng, 0);
        const theirs = disjointChanges(rng, 1);
        await write(ts, A, theirs);
        await write(ts, MAIN, ours);
        const r = await merge(ts.ctx, A, 'main');
        assert.deepEqual(r.conflicts, []);
        assert.equal(r.base.kind, 'fork');
        const merged = await exportDump(ts, MAIN);
        assert.equal(merged, await seedThen(ts, [ours, theirs]), 'target changes, then source changes');
        assert.equal(merged, await seedThen(ts, [theirs, ours]), 'source changes, then target changes');
        assert.equal(await exportDump(ts, { ...MAIN, checkpoint: r.checkpoint ?? 'merge' }), merged);
      } finally {
        await ts.cleanup();
      }
    });
  }

  it('reports every conflict kind and changes nothing; prefer source or target resolves them', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(
        ts,
        A,
        "UPDATE t SET v = 'a1' WHERE id = 1; UPDATE t SET v = 'a2' WHERE id = 2; DELETE FROM t WHERE id = 3;" +
          "INSERT INTO t VALUES (100, 'a100'); UPDATE t SET v = 'same' WHERE id = 4; UPDATE t SET v = 'a5' WHERE id = 5;",
      );
      const theirs =
        "UPDATE t SET v = 'm1' WHERE id = 1; DELETE FROM t WHERE id = 2; UPDATE t SET v = 'm3' WHERE id = 3;" +
        "INSERT INTO t VALUES (100, 'm100'); UPDATE t SET v = 'same' WHERE id = 4;";
      await write(ts, MAIN, theirs);
      await write(ts, B, theirs);
      const before = await exportDump(ts, MAIN);
      const head = (await ts.store.getRef('app', 'main')).ref.head_txid;
      const r = await merge(ts.ctx, A, 'main');
      assert.equal(r.applied, false);
      assert.deepEqual(
        r.conflicts.map((c) => [c.kind, c.key.id]),
        [
          ['update/update', 1n],
          ['update/delete', 2n],
          ['delete/update', 3n],
          ['insert/insert', 100n],
        ],
      );
      const uu = r.conflicts.find((c) => c.kind === 'update/update');
      assert.deepEqual([uu?.base?.v, uu?.source?.v, uu?.target?.v], ['row 1', 'a1', 'm1']);
      assert.equal((await ts.store.getRef('app', 'main')).ref.head_txid, head, 'nothing written');
      assert.equal(await exportDump(ts, MAIN), before);
      assert.equal(await ts.store.tryGetRef('app', 'main-pre-merge'), undefined, 'no undo point either');

      const bySource = await merge(ts.ctx, A, 'main', { prefer: 'source' });
      assert.equal(bySource.applied, true);
      assert.equal(bySource.prefer, 'source');
      const rows = (t: Target) => exportDump(ts, t);
      const s = await rows(MAIN);
      for (const line of ["(1,'a1')", "(2,'a2')", "(100,'a100')", "(4,'same')", "(5,'a5')"])
        assert.ok(s.includes(line), line);
      assert.ok(!s.includes('INSERT INTO t VALUES(3,'), 'the source deleted row 3');

      const byTarget = await merge(ts.ctx, A, 'b', { prefer: 'target' });
      assert.equal(byTarget.applied, true);
      assert.equal(byTarget.base.kind, 'siblings');
      const m = await rows(B);
      for (const line of ["(1,'m1')", "(3,'m3')", "(100,'m100')", "(5,'a5')"]) assert.ok(m.includes(line), line);
      assert.ok(!m.includes('INSERT INTO t VALUES(2,'), 'the target deleted row 2');
    } finally {
      await ts.cleanup();
    }
  });

  it('resolved rows settle update/update, update/delete (deleted and kept), delete/update and insert/insert', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(
        ts,
        A,
        "UPDATE t SET v = 'a1' WHERE id = 1; UPDATE t SET v = 'a2' WHERE id = 2; UPDATE t SET v = 'a6' WHERE id = 6;" +
          "DELETE FROM t WHERE id = 3; INSERT INTO t VALUES (100, 'a100'); UPDATE t SET v = 'a9' WHERE id = 9;" +
          "UPDATE w SET v = x'a0' WHERE n = 5;",
      );
      await write(
        ts,
        MAIN,
        "UPDATE t SET v = 'm1' WHERE id = 1; DELETE FROM t WHERE id = 2; DELETE FROM t WHERE id = 6;" +
          "UPDATE t SET v = 'm3' WHERE id = 3; INSERT INTO t VALUES (100, 'm100'); UPDATE w SET v = x'b0' WHERE n = 5;",
      );
      const report = mergeToJson(await merge(ts.ctx, A, 'main'));
      assert.equal(report.applied, false);
      assert.equal(report.conflicts.length, 6);
      // The rows come from the conflict report itself, as a caller edits it: the key as given, values as encoded.
      const pick = (table: string, id: number) => {
        const c = report.conflicts.find((x) => x.table === table && (x.key.id === id || x.key.n === id));
        assert.ok(c, `${table} ${id} conflicts`);
        return c;
      };
      const resolved: ResolvedRow[] = [
        { table: 't', key: pick('t', 1).key, row: { id: 1, v: 'both' } },
        { table: 't', key: pick('t', 2).key, row: null },
        { table: 't', key: pick('t', 6).key, row: pick('t', 6).source },
        { table: 't', key: pick('t', 3).key, row: pick('t', 3).target },
        { table: 't', key: pick('t', 100).key, row: { id: 100, v: 'a100+m100' } },
        { table: 'w', key: pick('w', 5).key, row: { ...pick('w', 5).key, v: { $blob: 'c0ffee' } } },
      ];
      const r = await merge(ts.ctx, A, 'main', { resolved });
      assert.equal(r.applied, true);
      assert.equal(r.resolved, 6);
      assert.equal(r.prefer, undefined);
      const s = await exportDump(ts, MAIN);
      for (const line of ["(1,'both')", "(6,'a6')", "(3,'m3')", "(100,'a100+m100')", "(9,'a9')", "X'c0ffee'"])
        assert.ok(s.includes(line), line);
      assert.ok(!s.includes('INSERT INTO t VALUES(2,'), 'row 2 resolved to deleted');
      const record = (await readLog(ts.ctx, MAIN, { limit: 1 })).records[0];
      assert.equal(record?.op, 'merge');
      assert.equal(record?.meta?.['offshoot.merge_resolved'], '6');
    } finally {
      await ts.cleanup();
    }
  });

  it('a partial resolution is refused and nothing is applied; prefer settles the rest', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(ts, A, "UPDATE t SET v = 'a1' WHERE id = 1; UPDATE t SET v = 'a2' WHERE id = 2;");
      await write(ts, MAIN, "UPDATE t SET v = 'm1' WHERE id = 1; UPDATE t SET v = 'm2' WHERE id = 2;");
      const before = await exportDump(ts, MAIN);
      const head = (await ts.store.getRef('app', 'main')).ref.head_txid;
      const resolved: ResolvedRow[] = [{ table: 't', key: { id: 1 }, row: { id: 1, v: 'mine' } }];
      const err = await rejectsCode(merge(ts.ctx, A, 'main', { resolved }), 'MERGE_CONFLICT');
      assert.match(err.message, /1 of 2 conflicting row\(s\) have no resolved row: t \{"id":2\}/);
      assert.match(err.hint ?? '', /--resolve file.*--prefer/);
      assert.match(err.hints.agent ?? '', /resolved.*prefer/);
      assert.equal((await ts.store.getRef('app', 'main')).ref.head_txid, head, 'nothing written');
      assert.equal(await exportDump(ts, MAIN), before);
      assert.equal(await ts.store.tryGetRef('app', 'main-pre-merge'), undefined, 'no undo point either');

      const preview = await previewMerge(ts.ctx, A, 'main', { resolved, prefer: 'source' });
      assert.deepEqual([preview.applied, preview.resolved, preview.prefer], [false, 1, 'source']);
      assert.deepEqual(preview.tables, [{ table: 't', inserted: 0, updated: 2, deleted: 0 }]);
      assert.equal((await ts.store.getRef('app', 'main')).ref.head_txid, head, 'a preview writes nothing');
      const r = await merge(ts.ctx, A, 'main', { resolved, prefer: 'source' });
      assert.equal(r.applied, true);
      assert.deepEqual([r.resolved, r.prefer], [1, 'source']);
      const s = await exportDump(ts, MAIN);
      assert.ok(s.includes("(1,'mine')") && s.includes("(2,'a2')"), s);
    } finally {
      await ts.cleanup();
    }
  });

  it('refuses resolved rows that name no conflict, an unknown table, unknown columns or a moved key', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(ts, A, "UPDATE t SET v = 'a1' WHERE id = 1; UPDATE t SET v = 'a2' WHERE id = 2;");
      await write(ts, MAIN, "UPDATE t SET v = 'm1' WHERE id = 1;");
      const head = (await ts.store.getRef('app', 'main')).ref.head_txid;
      const ok: ResolvedRow = { table: 't', key: { id: 1 }, row: { id: 1, v: 'x' } };
      const refused = async (extra: ResolvedRow, message: RegExp) => {
        const err = await rejectsCode(merge(ts.ctx, A, 'main', { resolved: [ok, extra] }), 'INVALID_ARGUMENT');
        assert.match(err.message, message);
        assert.match(err.hint ?? '', /--resolve file/);
        assert.match(err.hints.sdk ?? '', /resolved/);
      };
      await refused({ table: 't', key: { id: 2 }, row: { id: 2, v: 'y' } }, /names no conflicting row/);
      await refused({ table: 'nope', key: { id: 1 }, row: null }, /no table "nope"/);
      await refused({ table: 'nopk', key: { a: 'x' }, row: null }, /nopk has no primary key/);
      await refused({ table: 't', key: { id: 1 }, row: { id: 1, v: 'x', extra: 1 } }, /has no column extra/);
      await refused({ table: 't', key: { v: 'row 1' }, row: null }, /key of t is id/);
      await refused({ table: 't', key: { id: 1 }, row: { id: 7, v: 'x' } }, /key columns differ/);
      await refused({ table: 't', key: { id: 1 }, row: { id: 1, v: { $blob: 'zz' } } }, /is not a stored value/);
      assert.equal((await ts.store.getRef('app', 'main')).ref.head_txid, head, 'nothing written');
    } finally {
      await ts.cleanup();
    }
  });

  it('refuses a table without a primary key, and schema changes on both sides', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(ts, A, "UPDATE nopk SET b = 9 WHERE a = 'x';");
      await rejectsCode(merge(ts.ctx, A, 'main'), 'UNSUPPORTED');
      await write(ts, B, 'ALTER TABLE t ADD COLUMN extra TEXT;');
      await write(ts, MAIN, 'CREATE INDEX t_v ON t(v);');
      await rejectsCode(merge(ts.ctx, B, 'main'), 'MERGE_CONFLICT');
      assert.equal(await ts.store.tryGetRef('app', 'main-pre-merge'), undefined);
    } finally {
      await ts.cleanup();
    }
  });

  it('matches the rows of a rowid table by its declared PRIMARY KEY, not by rowid', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(
        ts,
        MAIN,
        "CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('a', '0'), ('b', '0');",
      );
      await fork(ts.ctx, MAIN, 'c');
      const C: Target = { db: 'app', branch: 'c' };
      // Both insert a new key: the same rowid on each side, two different rows. The source renames 'b' to 'z'.
      await write(
        ts,
        C,
        "INSERT INTO kv VALUES ('c', 'from c'); UPDATE kv SET k = 'z' WHERE k = 'b'; UPDATE kv SET v = '1' WHERE k = 'a';",
      );
      await write(ts, MAIN, "INSERT INTO kv VALUES ('m', 'from main');");
      const r = await merge(ts.ctx, C, 'main');
      assert.deepEqual(r.conflicts, []);
      assert.deepEqual(r.tables, [{ table: 'kv', inserted: 2, updated: 1, deleted: 1 }]);
      const s = await exportDump(ts, MAIN);
      for (const row of ["('a','1')", "('c','from c')", "('m','from main')", "('z','0')"])
        assert.ok(s.includes(row), row);
      assert.ok(!s.includes("('b',"), 'the source renamed b');
    } finally {
      await ts.cleanup();
    }
  });

  it('a constraint the merged rows break refuses MERGE_CONFLICT and leaves the target as it was, checked out or not', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(ts, MAIN, 'CREATE TABLE u(id INTEGER PRIMARY KEY, email TEXT UNIQUE);');
      await fork(ts.ctx, MAIN, 'c');
      await fork(ts.ctx, MAIN, 'fresh');
      const C: Target = { db: 'app', branch: 'c' };
      await write(ts, C, "INSERT INTO u VALUES (10, 'x@example.com'); UPDATE t SET v = 'c' WHERE id = 1;");
      await write(ts, MAIN, "INSERT INTO u VALUES (11, 'x@example.com');");
      const before = await exportDump(ts, MAIN);
      const head = (await ts.store.getRef('app', 'main')).ref.head_txid;
      await rejectsCode(merge(ts.ctx, C, 'main'), 'MERGE_CONFLICT');
      assert.equal((await ts.store.getRef('app', 'main')).ref.head_txid, head);
      assert.equal(await exportDump(ts, MAIN), before);
      assert.equal(await ts.store.tryGetRef('app', 'main-pre-merge'), undefined);
      const co = await checkout(ts.ctx, MAIN);
      assert.equal(co.dirty, false, 'the checkout the merge was tried in holds nothing new');
      // A target with no checkout: the merge is staged beside it, and lands as its checkout.
      const r = await merge(ts.ctx, C, 'fresh');
      assert.equal(r.applied, true);
      const fresh = await exportDump(ts, { db: 'app', branch: 'fresh' });
      assert.ok(fresh.includes("(10,'x@example.com')") && fresh.includes("(1,'c')"), fresh);
      assert.equal(
        (await checkout(ts.ctx, { db: 'app', branch: 'fresh' })).reused,
        true,
        'the merged file is the checkout',
      );
    } finally {
      await ts.cleanup();
    }
  });

  it('takes a schema change made on the source side only, with its rows', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(ts, A, "ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'd'; UPDATE t SET extra = 'e' WHERE id = 7;");
      await write(ts, MAIN, "UPDATE t SET v = 'main' WHERE id = 8;");
      const r = await merge(ts.ctx, A, 'main');
      assert.equal(r.applied, true);
      const s = await exportDump(ts, MAIN);
      assert.ok(s.includes("(7,'row 7','e')"), s);
      assert.ok(s.includes("(8,'main','d')"), s);
    } finally {
      await ts.cleanup();
    }
  });

  it('a merge after a merge starts from the state the first one took', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(ts, A, "UPDATE t SET v = 'a1' WHERE id = 1; UPDATE t SET v = 'a2' WHERE id = 2;");
      await write(ts, MAIN, "UPDATE t SET v = 'm1' WHERE id = 1;");
      const first = await merge(ts.ctx, A, 'main', { prefer: 'target' });
      assert.equal(first.conflicts.length, 1);
      assert.equal(first.checkpoint, 'merge');
      await write(ts, A, "UPDATE t SET v = 'a3' WHERE id = 3;");
      const second = await merge(ts.ctx, A, 'main');
      assert.equal(second.base.kind, 'merge');
      assert.deepEqual(second.conflicts, [], 'row 1 was settled by the first merge');
      assert.equal(second.checkpoint, 'merge-2');
      assert.deepEqual(second.tables, [{ table: 't', inserted: 0, updated: 1, deleted: 0 }]);
      const s = await exportDump(ts, MAIN);
      for (const line of ["(1,'m1')", "(2,'a2')", "(3,'a3')"]) assert.ok(s.includes(line), line);
      const third = await merge(ts.ctx, A, 'main');
      assert.equal(third.applied, false, 'nothing new to take');
      assert.deepEqual(third.tables, []);
    } finally {
      await ts.cleanup();
    }
  });

  it('a protected target takes force, an agent needs -allow-force too; the undo point restores', async () => {
    const ts = await open();
    try {
      await seeded(ts);
      await write(ts, A, "UPDATE t SET v = 'a1' WHERE id = 1;");
      await setProtected(ts.ctx, MAIN, true);
      const before = await exportDump(ts, MAIN);
      await rejectsCode(merge(ts.ctx, A, 'main'), 'PROTECTED');
      const agent = { kind: 'agent', allowForce: false } as const;
      await rejectsCode(merge(ts.ctx, A, 'main', { force: true, actor: agent }), 'PROTECTED');
      const r = await merge(ts.ctx, A, 'main', { force: true });
      assert.equal(r.applied, true);
      assert.equal(r.backup, 'main-pre-merge');
      assert.notEqual(await exportDump(ts, MAIN), before);
      assert.equal(await exportDump(ts, { db: 'app', branch: 'main-pre-merge' }), before);
      await promote(ts.ctx, { db: 'app', branch: 'main-pre-merge' }, 'main', { force: true });
      assert.equal(await exportDump(ts, MAIN), before);
    } finally {
      await ts.cleanup();
    }
  });
}
