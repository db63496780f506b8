// Two promotes onto one base: the second never silently replaces an undo point holding the only copy of a state
// (here a human's checkpoint made on the base while two runs worked in forks of it), and `promote --if-head TXID`
// promotes only onto the head a run forked from, refusing with BASE_MOVED (exit 4) and changing nothing otherwise.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertCleanError, dump, ensureBuilt, sql, tempStore, type TempStore } from './cli-harness.js';

const CONFLICT = 4;

interface Promoted {
  txid: number;
  backup: string;
  earlier_backup?: string;
}

/** Every ref file of the database with its bytes, to prove a refusal changed no branch. */
function refs(ts: TempStore): string {
  const dir = ts.path('store', 'refs', 'app');
  return readdirSync(dir)
    .filter((n) => !n.endsWith('.lock'))
    .sort()
    .map((n) => `${n}=${readFileSync(`${dir}/${n}`, 'utf8')}`)
    .join('\n');
}

/** The head of `app@branch` as a `.dump`. */
function headDump(ts: TempStore, branch: string): string {
  const out = ts.path(`${branch}-${Date.now()}-${Math.random().toString(36).slice(2)}.db`);
  ts.run(['export', `app@${branch}`, out]);
  return dump(out);
}

/** The branches of app whose head holds `row`. */
function holding(ts: TempStore, row: string): string[] {
  const doc = ts.json<{ branches: Array<{ branch: string }> }>(['status', 'app']);
  return doc.branches.map((b) => b.branch).filter((b) => headDump(ts, b).includes(`'${row}'`));
}

/** A store whose main has a base row, two runs forked from it, then a human's checkpoint on main. */
function twoRunsAndAHuman(): { ts: TempStore; forkedAt: number } {
  const ts = tempStore({ init: true });
  ts.run(['create', 'app']);
  const main = ts.run(['checkout', 'app']).stdout.trim();
  sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('base');");
  ts.run(['checkpoint', 'app', 'base']);
  const forkedAt = ts.json<{ txid: number }>(['fork', 'app', 'run-1']).txid;
  ts.run(['fork', 'app', 'run-2']);
  for (const run of ['run-1', 'run-2']) {
    const co = ts.run(['checkout', `app@${run}`]).stdout.trim();
    sql(co, `INSERT INTO t VALUES ('${run}');`);
    ts.run(['checkpoint', `app@${run}`, 'done']);
  }
  sql(main, "INSERT INTO t VALUES ('human');");
  ts.run(['checkpoint', 'app', 'human']);
  return { ts, forkedAt };
}

describe('two promotes onto a base a human checkpointed meanwhile', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = twoRunsAndAHuman().ts;
  });
  after(() => ts.cleanup());

  test("the human's checkpoint stays in a branch: the earlier undo point is kept as -pre-promote-2", () => {
    const first = ts.json<Promoted>(['promote', 'app@run-1', '--onto', 'main', '--force']);
    assert.equal(first.backup, 'main-pre-promote');
    assert.equal(first.earlier_backup, undefined, 'nothing to keep aside on the first promote');
    ts.run(['destroy', 'app@run-1']);
    const second = ts.run(['promote', 'app@run-2', '--onto', 'main', '--force']);
    assert.deepEqual(holding(ts, 'human'), ['main-pre-promote-2']);
    assert.match(second.stderr, /previous head of app@main kept as app@main-pre-promote$/m);
    assert.match(second.stderr, /earlier undo point of app@main .* kept as app@main-pre-promote-2$/m);
    assert.match(headDump(ts, 'main-pre-promote'), /'run-1'/, 'the newest undo point holds what main held last');
    assert.match(headDump(ts, 'main'), /'run-2'/);
    // The next promote keeps run-1's state (destroyed with its fork) as the next free link of the chain.
    const third = ts.json<Promoted>(['promote', 'app@run-2', '--onto', 'main', '--force']);
    assert.equal(third.backup, 'main-pre-promote');
    assert.equal(third.earlier_backup, 'main-pre-promote-3');
    assert.deepEqual(holding(ts, 'run-1'), ['main-pre-promote-3']);
    assert.deepEqual(holding(ts, 'human'), ['main-pre-promote-2']);
  });
});

describe('an earlier undo point whose state another branch holds', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = twoRunsAndAHuman().ts;
    ts.run(['fork', 'app', 'after-human']);
  });
  after(() => ts.cleanup());

  test('is replaced as before: no chain grows', () => {
    ts.run(['promote', 'app@run-1', '--onto', 'main', '--force']);
    const doc = ts.json<Promoted>(['promote', 'app@run-2', '--onto', 'main', '--force']);
    assert.equal(doc.earlier_backup, undefined);
    const names = ts.json<{ branches: Array<{ branch: string }> }>(['status', 'app']).branches.map((b) => b.branch);
    assert.equal(names.includes('main-pre-promote-2'), false);
    assert.ok(holding(ts, 'human').includes('after-human'));
  });
});

describe('promote --if-head', () => {
  let ts: TempStore;
  let forkedAt: number;
  before(() => {
    ensureBuilt();
    ({ ts, forkedAt } = twoRunsAndAHuman());
  });
  after(() => ts.cleanup());

  test('refuses BASE_MOVED when the target moved since, and changes nothing', () => {
    const beforeRefs = refs(ts);
    const r = ts.run(['promote', 'app@run-1', '--onto', 'main', '--force', '--if-head', String(forkedAt)], {
      expectCode: 'any',
    });
    assertCleanError(r, CONFLICT, new RegExp(`app@main moved since txid ${forkedAt}`));
    assert.match(r.stderr, /--if-head/);
    assert.equal(refs(ts), beforeRefs);
    const j = ts.run(['promote', 'app@run-1', '--onto', 'main', '--force', '--if-head', String(forkedAt), '--json'], {
      expectCode: 'any',
    });
    assert.equal(j.code, CONFLICT);
    assert.match(j.stderr, /"code":"BASE_MOVED"/);
  });

  test('promotes when the target is still at that head', () => {
    const head = ts
      .json<{ branches: Array<{ branch: string; txid: number }> }>(['status', 'app'])
      .branches.find((b) => b.branch === 'main')?.txid;
    const doc = ts.json<Promoted>(['promote', 'app@run-2', '--onto', 'main', '--force', '--if-head', String(head)]);
    assert.match(headDump(ts, 'main'), /'run-2'/);
    assert.equal(doc.backup, 'main-pre-promote');
  });

  test('refuses a target whose checkout holds writes no checkpoint has', () => {
    const head = ts
      .json<{ branches: Array<{ branch: string; txid: number }> }>(['status', 'app'])
      .branches.find((b) => b.branch === 'main')?.txid;
    ts.run(['fork', 'app', 'run-3']);
    const main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "INSERT INTO t VALUES ('unsaved');");
    const beforeRefs = refs(ts);
    const r = ts.run(['promote', 'app@run-3', '--onto', 'main', '--force', '--if-head', String(head)], {
      expectCode: 'any',
    });
    assertCleanError(r, CONFLICT, /checkout holds writes no checkpoint has/);
    assert.equal(refs(ts), beforeRefs);
    assert.match(dump(main), /'unsaved'/);
  });

  test('--if-head must be a txid', () => {
    const r = ts.run(['promote', 'app@run-1', '--onto', 'main', '--if-head', 'soon'], { expectCode: 'any' });
    assertCleanError(r, 2, /--if-head/);
  });
});

describe('promote --if-head when the head txid came back with another state', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
  });
  after(() => ts.cleanup());

  test('a fork of the target made at that txid is refused BASE_MOVED', () => {
    ts.run(['create', 'app']);
    ts.run(['fork', 'app', 'other']);
    const main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('main');");
    ts.run(['checkpoint', 'app', 'two']);
    const forkedAt = ts.json<{ txid: number }>(['fork', 'app', 'run']).txid;
    const other = ts.run(['checkout', 'app@other']).stdout.trim();
    sql(other, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('other');");
    ts.run(['checkpoint', 'app@other', 'two']);
    const promoted = ts.json<Promoted>(['promote', 'app@other', '--onto', 'main', '--force']);
    assert.equal(promoted.txid, forkedAt, "main's head txid is back at the number run was forked at");
    const beforeRefs = refs(ts);
    const r = ts.run(['promote', 'app@run', '--onto', 'main', '--force', '--if-head', String(forkedAt)], {
      expectCode: 'any',
    });
    assertCleanError(r, CONFLICT, /again, but no longer the state app@run was forked from/);
    assert.equal(refs(ts), beforeRefs);
    assert.match(headDump(ts, 'main'), /'other'/);
  });
});
