// `offshoot merge` as users run it: two agents' forks written by the stock sqlite3 CLI, merged into main; conflicts
// listed with nothing changed and exit 9, --prefer resolving them, and the undo point named.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertCleanError, dump, ensureBuilt, sql, tempStore, type TempStore } from './cli-harness.js';

const MERGE_CONFLICT = 9;

interface Merged {
  applied: boolean;
  txid: number;
  checkpoint?: string;
  backup?: string;
  base: { kind: string; at: string };
  tables: Array<{ table: string; inserted: number; updated: number; deleted: number }>;
  conflicts: Array<{
    table: string;
    kind: string;
    key: Record<string, unknown>;
    source: Record<string, unknown> | null;
    target: Record<string, unknown> | null;
  }>;
  resolved?: number;
  prefer?: string;
}

function headDump(ts: TempStore, branch: string): string {
  const out = ts.path(`${branch}-${Math.random().toString(36).slice(2)}.db`);
  ts.run(['export', `app@${branch}`, out]);
  return dump(out);
}

describe('offshoot merge', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    const main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');");
    ts.run(['checkpoint', 'app', 'seed']);
    ts.run(['fork', 'app', 'agent-a', 'agent-b']);
    sql(
      ts.run(['checkout', 'app@agent-a']).stdout.trim(),
      "UPDATE t SET v = 'a' WHERE id = 1; INSERT INTO t VALUES (3, 'a3');",
    );
    sql(
      ts.run(['checkout', 'app@agent-b']).stdout.trim(),
      "UPDATE t SET v = 'b' WHERE id = 1; INSERT INTO t VALUES (4, 'b4');",
    );
  });
  after(() => ts.cleanup());

  test('--help shows the examples', () => {
    const help = ts.run(['merge', '--help']).stdout;
    assert.match(help, /offshoot merge app@agent-a --into main --force/);
    assert.match(help, /--prefer SIDE/);
  });

  test('merges one agent, then reports the other agent conflict (exit 9, nothing changed), then --prefer resolves it', () => {
    const first = ts.json<Merged>(['merge', 'app@agent-a', '--into', 'main', '--force']);
    assert.equal(first.applied, true);
    assert.equal(first.backup, 'main-pre-merge');
    assert.deepEqual(first.base, { kind: 'fork', at: 'main@2' });
    assert.deepEqual(first.tables, [{ table: 't', inserted: 1, updated: 1, deleted: 0 }]);
    const merged = headDump(ts, 'main');

    const refused = ts.run(['merge', 'app@agent-b', '--into', 'main', '--force', '--json'], {
      expectCode: MERGE_CONFLICT,
    });
    const doc = JSON.parse(refused.stdout) as Merged;
    assert.equal(doc.applied, false);
    assert.deepEqual(
      doc.conflicts.map((c) => [c.table, c.kind, c.key, c.source, c.target]),
      [['t', 'update/update', { id: 1 }, { id: 1, v: 'b' }, { id: 1, v: 'a' }]],
    );
    assert.equal(headDump(ts, 'main'), merged, 'nothing was merged');
    const text = ts.run(['merge', 'app@agent-b', '--into', 'main', '--force'], { expectCode: MERGE_CONFLICT });
    assert.match(text.stdout, /1 conflicting row\(s\), nothing merged/);
    assert.match(text.stdout, /t id=1: update\/update/);
    assert.match(text.stderr, /--prefer source or --prefer target/);

    const resolved = ts.json<Merged>(['merge', 'app@agent-b', '--into', 'main', '--force', '--prefer', 'target']);
    assert.equal(resolved.checkpoint, 'merge-2');
    const s = headDump(ts, 'main');
    for (const row of ["(1,'a')", "(3,'a3')", "(4,'b4')"]) assert.ok(s.includes(row), row);
  });

  test('user errors are one line with their own exit code', () => {
    assertCleanError(ts.run(['merge', 'app@agent-a'], { expectCode: 2 }), 2, /--into/);
    assertCleanError(ts.run(['merge', 'app@agent-a', '--into', 'main', '--prefer', 'mine'], { expectCode: 2 }), 2);
    assertCleanError(ts.run(['merge', 'app@agent-a', '--into', 'main'], { expectCode: 5 }), 5, /protected/);
  });
});

describe('offshoot merge: a source at a moment, and the log', () => {
  let ts: TempStore;
  let at: number;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    sql(ts.run(['checkout', 'app']).stdout.trim(), 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
    ts.run(['checkpoint', 'app', 'seed']);
    ts.run(['fork', 'app', 'a', 'b']);
    const a = ts.run(['checkout', 'app@a']).stdout.trim();
    sql(a, "INSERT INTO t VALUES (1, 'early');");
    at = ts.json<{ txid: number }>(['checkpoint', 'app@a', 'early']).txid;
    sql(a, "INSERT INTO t VALUES (2, 'late');");
    ts.run(['checkpoint', 'app@a', 'late']);
  });
  after(() => ts.cleanup());

  test('merges the source as it was at tx:N, then the rest from there; offshoot log shows each merge', () => {
    const env = { OFFSHOOT_ACTOR_META: 'run=r1' };
    const first = ts.json<Merged>(['merge', `app@a@tx:${at}`, '--into', 'b', '--actor', 'agent'], { env });
    assert.equal(first.applied, true);
    assert.deepEqual(first.tables, [{ table: 't', inserted: 1, updated: 0, deleted: 0 }]);
    assert.doesNotMatch(headDump(ts, 'b'), /late/, 'the state at the moment, not the head');
    const second = ts.json<Merged>(['merge', 'app@a', '--into', 'b']);
    assert.deepEqual(second.base, { kind: 'merge', at: `a@${at}` });
    assert.deepEqual(second.tables, [{ table: 't', inserted: 1, updated: 0, deleted: 0 }]);

    interface Rec {
      op: string;
      actor: string;
      surface: string;
      txid_before: number;
      txid_after: number;
      from?: string;
      undo?: string;
      name?: string;
      meta?: Record<string, string>;
    }
    const log = ts.json<{ records: Rec[] }>(['log', 'app@b']);
    const merges = log.records.filter((r) => r.op === 'merge');
    assert.equal(merges.length, 2, JSON.stringify(log.records.map((r) => r.op)));
    const [m1, m2] = merges as [Rec, Rec];
    assert.equal(m1.actor, 'agent');
    assert.equal(m1.surface, 'cli');
    assert.equal(m1.txid_after, first.txid);
    assert.equal(m1.txid_before, first.txid - 1);
    assert.equal(m1.from, `app@a@${at}`);
    assert.equal(m1.undo, 'b-pre-merge');
    assert.equal(m1.name, 'merge');
    assert.equal(m1.meta?.run, 'r1');
    assert.equal(m1.meta?.['offshoot.merge_base'], 'main@2');
    assert.equal(m1.meta?.['offshoot.merged_from'], 'a');
    assert.equal(m2.actor, 'human');
    assert.equal(m2.meta?.['offshoot.merge_base'], `a@${at}`);
    assert.equal(m2.txid_after, second.txid);
    const text = ts.run(['log', 'app@b']).stdout;
    assert.match(
      text,
      new RegExp(`merge +txid ${first.txid - 1}->${first.txid} +agent cli +name=merge +from=app@a@${at}`),
    );
  });

  test('a source moment before its fork point is refused, one line', () => {
    assertCleanError(ts.run(['merge', 'app@a@tx:1', '--into', 'b'], { expectCode: 'any' }), 2, /older than/);
  });
});

describe('offshoot merge --resolve', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    sql(
      ts.run(['checkout', 'app']).stdout.trim(),
      "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB); INSERT INTO t VALUES (1, 'one', x'01'), (2, 'two', x'02');",
    );
    ts.run(['checkpoint', 'app', 'seed']);
    ts.run(['fork', 'app', 'a', 'b']);
    sql(
      ts.run(['checkout', 'app@a']).stdout.trim(),
      "UPDATE t SET v = 'a', b = x'aa' WHERE id = 1; UPDATE t SET v = 'a2' WHERE id = 2; INSERT INTO t VALUES (3, 'a3', NULL);",
    );
    sql(
      ts.run(['checkout', 'app@b']).stdout.trim(),
      "UPDATE t SET v = 'b', b = x'bb' WHERE id = 1; DELETE FROM t WHERE id = 2; INSERT INTO t VALUES (3, 'b3', NULL);",
    );
  });
  after(() => ts.cleanup());

  test('--help shows a --resolve example', () => {
    assert.match(ts.run(['merge', '--help']).stdout, /--resolve -/);
  });

  test('the --json report, edited, resolves each conflict; a partial or stray resolution changes nothing', () => {
    const report = JSON.parse(
      ts.run(['merge', 'app@a', '--into', 'b', '--json'], { expectCode: MERGE_CONFLICT }).stdout,
    ) as Merged;
    assert.deepEqual(
      report.conflicts.map((c) => [c.kind, c.key]),
      [
        ['update/update', { id: 1 }],
        ['update/delete', { id: 2 }],
        ['insert/insert', { id: 3 }],
      ],
    );
    const [uu, ud, ii] = report.conflicts as [Merged['conflicts'][0], Merged['conflicts'][0], Merged['conflicts'][0]];
    assert.deepEqual(uu.source, { id: 1, v: 'a', b: { $blob: 'aa' } }, 'a BLOB as the report encodes it');
    const before = headDump(ts, 'b');

    const partial = ts.path('partial.json');
    writeFileSync(partial, JSON.stringify({ resolved: [{ table: 't', key: uu.key, row: uu.source }] }));
    const refused = ts.run(['merge', 'app@a', '--into', 'b', '--resolve', partial], { expectCode: MERGE_CONFLICT });
    assertCleanError(refused, MERGE_CONFLICT, /2 of 3 conflicting row\(s\) have no resolved row/);
    assert.match(refused.stderr, /--resolve file/);
    const stray = JSON.stringify([{ table: 't', key: { id: 9 }, row: null }]);
    assertCleanError(
      ts.run(['merge', 'app@a', '--into', 'b', '--resolve', '-'], { input: stray, expectCode: 2 }),
      2,
      /names no conflicting row/,
    );
    assertCleanError(
      ts.run(['merge', 'app@a', '--into', 'b', '--resolve', '-'], { input: '{not json', expectCode: 2 }),
      2,
      /--resolve: standard input is not JSON/,
    );
    assert.equal(headDump(ts, 'b'), before, 'nothing was merged');

    const rows = [
      { table: 't', key: uu.key, row: { ...uu.source, v: 'a+b', b: { $blob: 'abba' } } },
      { table: 't', key: ud.key, row: ud.source },
      { table: 't', key: ii.key, row: null },
    ];
    const merged = ts.json<Merged>(['merge', 'app@a', '--into', 'b', '--resolve', '-'], {
      input: JSON.stringify(rows),
    });
    assert.equal(merged.applied, true);
    assert.equal(merged.resolved, 3);
    assert.equal(merged.prefer, undefined);
    const s = headDump(ts, 'b');
    for (const row of ["(1,'a+b',X'abba')", "(2,'a2',X'02')"]) assert.ok(s.includes(row), `${row} in ${s}`);
    assert.ok(!s.includes('INSERT INTO t VALUES(3,'), 'row 3 resolved to deleted');
    const log = ts.json<{ records: Array<{ op: string; meta?: Record<string, string> }> }>(['log', 'app@b']);
    assert.equal(log.records.find((r) => r.op === 'merge')?.meta?.['offshoot.merge_resolved'], '3');
  });
});
