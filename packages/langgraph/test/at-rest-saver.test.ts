import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { isOffshootError } from '@offshoot/client';
import { OffshootSaver } from '../src/index.js';
import { OFFSHOOT_BIN } from './daemon-fixture.js';
import { buildGraph, snapshot, thread } from './graph-fixture.js';

const T = thread('t1');

/** Runs `sql` on the SQLite file at `path` with a connection of its own, as another writer of the checkout would. */
function write(path: string, sql: string): void {
  const db = new DatabaseSync(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

function branches(store: string, db: string): { branch: string; ttl?: string }[] {
  const out = execFileSync(OFFSHOOT_BIN, ['-store', store, '--json', 'status', db], { encoding: 'utf8' });
  return (JSON.parse(out) as { branches: { branch: string; ttl?: string }[] }).branches;
}

describe('OffshootSaver.atRest driving the offshoot CLI, no daemon', { timeout: 180_000 }, () => {
  let tmp: string;
  let store: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'offshoot-lg-'));
    store = join(tmp, 'store');
    execFileSync(OFFSHOOT_BIN, ['-store', store, 'init']);
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('checkpoint, rollback in place (exact getTuple and list), fork from a checkpoint, promote, destroy', async () => {
    const saver = await OffshootSaver.atRest(store, 'evals');
    assert.equal(saver.mode, 'at-rest');
    const app = buildGraph(saver);
    await app.invoke({ n: 1 }, T);
    assert.ok((await saver.checkpoint('one', { by: 'test' })) > 1);
    const atOne = await snapshot(saver, T);
    await app.invoke({ n: 10 }, T);
    const later = await snapshot(saver, T);

    const fork = await saver.forkThread('attempt', { fromCheckpoint: 'one', ttl: '2h' });
    assert.deepEqual(await snapshot(fork, T), atOne);
    const headFork = await saver.forkThread('head');
    assert.deepEqual(await snapshot(headFork, T), later, 'a head fork checkpoints the dirty checkout first');
    await headFork.destroy();

    await saver.rollback('one');
    assert.deepEqual(await snapshot(saver, T), atOne);
    assert.equal((await app.invoke({ n: 3 }, T)).n, 4, 'the compiled graph survives the rollback');

    await buildGraph(fork).invoke({ n: 70 }, T);
    const winner = await snapshot(fork, T);
    await saver.close();
    await assert.rejects(fork.promote('main'), (e) => isOffshootError(e, 'PROTECTED'));
    await fork.promote('main', { force: true });
    await fork.destroy();
    const names = branches(store, 'evals').map((b) => b.branch);
    assert.ok(!names.includes('attempt') && !names.includes('head'));

    const main = await OffshootSaver.atRest(store, 'evals', 'main', { create: false });
    assert.deepEqual(await snapshot(main, T), winner);
    await assert.rejects(main.destroy(), (e) => isOffshootError(e, 'PROTECTED'));
    assert.equal(main.closed, true);
  });

  test('merge brings two forks back into main row by row; rows both changed wait for prefer', async () => {
    const main = await OffshootSaver.atRest(store, 'mg');
    await buildGraph(main).invoke({ n: 1 }, T);
    write(main.path, "CREATE TABLE notes(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO notes VALUES (1, 'base')");
    await main.checkpoint('base');
    const atBase = await snapshot(main, T);
    const a = await main.forkThread('agent-a');
    const b = await main.forkThread('agent-b');
    await main.close();
    await buildGraph(a).invoke({ n: 10 }, thread('a'));
    await buildGraph(b).invoke({ n: 20 }, thread('b'));
    write(a.path, "UPDATE notes SET v = 'a'");
    write(b.path, "UPDATE notes SET v = 'b'");
    const [fromA, fromB] = [await snapshot(a, thread('a')), await snapshot(b, thread('b'))];

    await assert.rejects(a.merge('main'), (e) => isOffshootError(e, 'PROTECTED'));
    const first = await a.merge('main', { force: true });
    assert.equal(first.applied, true);
    assert.equal(first.backup, 'main-pre-merge');
    const held = await b.merge('main', { force: true });
    assert.equal(held.applied, false, 'a row both forks changed holds the merge');
    assert.deepEqual(
      held.conflicts.map((c) => [c.table, c.kind, c.source?.['v'], c.target?.['v']]),
      [['notes', 'update/update', 'b', 'a']],
    );
    const second = await b.merge('main', { force: true, prefer: 'source' });
    assert.equal(second.applied, true);
    await a.destroy();
    await b.destroy();

    const merged = await OffshootSaver.atRest(store, 'mg', 'main', { create: false });
    try {
      assert.deepEqual(await snapshot(merged, T), atBase);
      assert.deepEqual(await snapshot(merged, thread('a')), fromA);
      assert.deepEqual(await snapshot(merged, thread('b')), fromB);
      const db = new DatabaseSync(merged.path, { readOnly: true });
      assert.deepEqual({ ...db.prepare('SELECT v FROM notes').get() }, { v: 'b' }, 'prefer source took agent-b');
      db.close();
      await assert.rejects(merged.merge(''), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
    } finally {
      await merged.close();
    }
  });

  test('bad arguments give an OffshootError with the CLI error code', async () => {
    await assert.rejects(OffshootSaver.atRest(store, 'absent', 'main', { create: false }), (e) =>
      isOffshootError(e, 'NOT_FOUND'),
    );
    await assert.rejects(OffshootSaver.atRest(store, 'evals', 'Not A Branch'), (e) =>
      isOffshootError(e, 'INVALID_NAME'),
    );
    await assert.rejects(OffshootSaver.atRest(store, 'evals', 'main', { bin: join(tmp, 'missing') }), (e) =>
      isOffshootError(e, 'NOT_FOUND'),
    );
    const saver = await OffshootSaver.atRest(store, 'args');
    try {
      await buildGraph(saver).invoke({ n: 1 }, T);
      await assert.rejects(saver.checkpoint(), (e) => isOffshootError(e, 'USAGE'));
      await assert.rejects(saver.forkThread('x', { ttl: '-5m' }), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
      await assert.rejects(saver.rollback('never'), (e) => isOffshootError(e, 'NOT_FOUND'));
      assert.equal((await saver.getTuple(T))?.checkpoint.channel_values['n'], 2, 'usable after a refused rollback');
    } finally {
      await saver.close();
    }
  });
});
