import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { connect, isOffshootError } from '@offshoot/client';
import { startDaemon, type TestDaemon } from '@offshoot/client/testkit';
import { OffshootSaver } from '../src/index.js';
import { OFFSHOOT_BIN } from './daemon-fixture.js';
import { buildGraph, snapshot, thread } from './graph-fixture.js';

const T = thread('t1');

describe('OffshootSaver.session on a real daemon', { timeout: 180_000 }, () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
  });
  after(async () => {
    await daemon.stop();
  });

  test('a compiled graph runs on it; rollback restores getTuple and the list history exactly, in place', async () => {
    const saver = await OffshootSaver.session(daemon.sock, 'rb');
    try {
      assert.equal(saver.mode, 'session');
      assert.equal(saver.branch, 'main');
      const app = buildGraph(saver);
      await app.invoke({ n: 1 }, T);
      const txid = await saver.checkpoint('after-one', { step: '1' });
      assert.ok(txid > 1);
      const atCheckpoint = await snapshot(saver, T);
      assert.equal(atCheckpoint.tuple?.checkpoint.channel_values['n'], 2);

      await app.invoke({ n: 10 }, T);
      await saver.checkpoint('after-two');
      await app.invoke({ n: 20 }, T);
      assert.equal((await saver.getTuple(T))?.checkpoint.channel_values['n'], 21);

      await saver.rollback('after-one');
      assert.deepEqual(await snapshot(saver, T), atCheckpoint);
      // The graph compiled before the rollback keeps working on the restored state.
      const out = await app.invoke({ n: 5 }, T);
      assert.equal(out.n, 6);
      assert.deepEqual(out.log, ['plan@1', 'act@1', 'plan@5', 'act@5']);
    } finally {
      await saver.close();
    }
  });

  test('forkThread from a named checkpoint is independent of its parent; the parent is untouched', async () => {
    const parent = await OffshootSaver.session(daemon.sock, 'fk');
    try {
      const app = buildGraph(parent);
      await app.invoke({ n: 1 }, T);
      await parent.checkpoint('base');
      const atBase = await snapshot(parent, T);
      await app.invoke({ n: 100 }, T);
      const parentNow = await snapshot(parent, T);

      const child = await parent.forkThread('attempt-1', { fromCheckpoint: 'base', ttl: '1h', meta: { run: '7' } });
      try {
        assert.equal(child.branch, 'attempt-1');
        assert.notEqual(child.path, parent.path);
        assert.deepEqual(await snapshot(child, T), atBase);
        await buildGraph(child).invoke({ n: 50 }, T);
        assert.equal((await child.getTuple(T))?.checkpoint.channel_values['n'], 51);
        assert.deepEqual(await snapshot(parent, T), parentNow);

        const headFork = await parent.forkThread('attempt-2');
        assert.deepEqual(await snapshot(headFork, T), parentNow, 'a head fork holds the unflushed writes');
        await headFork.destroy();
        assert.equal(headFork.closed, true);
        await headFork.destroy();
      } finally {
        await child.close();
      }
      const client = await connect(daemon.sock);
      const branches = await client.branches('fk');
      client.close();
      assert.deepEqual(branches.map((b) => b.branch).sort(), ['attempt-1', 'main']);
      assert.equal(branches.find((b) => b.branch === 'attempt-1')?.ttl, '1h0m0s');
    } finally {
      await parent.close();
    }
  });

  test('promote copies a fork onto main (force); destroy respects protection and always closes', async () => {
    const main = await OffshootSaver.session(daemon.sock, 'pm');
    await buildGraph(main).invoke({ n: 1 }, T);
    const attempt = await main.forkThread('try');
    await main.close();
    await buildGraph(attempt).invoke({ n: 40 }, T);
    const winner = await snapshot(attempt, T);
    await assert.rejects(attempt.promote('main'), (e) => isOffshootError(e, 'PROTECTED'));
    assert.ok((await attempt.promote('main', { force: true })) > 0);
    await attempt.destroy();

    const reopened = await OffshootSaver.session(daemon.sock, 'pm', 'main', { create: false });
    assert.deepEqual(await snapshot(reopened, T), winner);
    await assert.rejects(reopened.destroy(), (e) => isOffshootError(e, 'PROTECTED'));
    assert.equal(reopened.closed, true);
    await assert.rejects(reopened.checkpoint('x'), (e) => isOffshootError(e, 'USAGE'));
  });

  test('merge brings two forks back into main, where a second promote would replace the first', async () => {
    const main = await OffshootSaver.session(daemon.sock, 'mg');
    await buildGraph(main).invoke({ n: 1 }, T);
    const a = await main.forkThread('agent-a');
    const b = await main.forkThread('agent-b');
    await main.close();
    await buildGraph(a).invoke({ n: 10 }, thread('a'));
    await buildGraph(b).invoke({ n: 20 }, thread('b'));
    const [fromA, fromB] = [await snapshot(a, thread('a')), await snapshot(b, thread('b'))];
    await assert.rejects(a.merge('main'), (e) => isOffshootError(e, 'PROTECTED'));
    const first = await a.merge('main', { force: true });
    assert.equal(first.applied, true);
    const second = await b.merge('main', { force: true });
    assert.equal(second.applied, true);
    assert.deepEqual(second.conflicts, []);
    await a.destroy();
    await b.destroy();

    const merged = await OffshootSaver.session(daemon.sock, 'mg', 'main', { create: false });
    try {
      assert.deepEqual(await snapshot(merged, thread('a')), fromA, 'the unflushed writes of agent-a were merged');
      assert.deepEqual(await snapshot(merged, thread('b')), fromB);
      assert.equal((await merged.getTuple(T))?.checkpoint.channel_values['n'], 2);
    } finally {
      await merged.close();
    }
    await assert.rejects(merged.merge('main'), (e) => isOffshootError(e, 'USAGE'));
  });

  test('bad arguments give an OffshootError with a code, and leave the saver usable', async () => {
    await assert.rejects(OffshootSaver.session(daemon.sock, 'nope', 'main', { create: false }), (e) =>
      isOffshootError(e, 'NOT_FOUND'),
    );
    await assert.rejects(OffshootSaver.session(daemon.sock, 'Bad Name'), (e) => isOffshootError(e, 'INVALID_NAME'));
    const saver = await OffshootSaver.session(daemon.sock, 'bad');
    try {
      const app = buildGraph(saver);
      await app.invoke({ n: 1 }, T);
      await assert.rejects(saver.forkThread(''), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
      await assert.rejects(saver.forkThread('Has Spaces'), (e) => isOffshootError(e, 'INVALID_NAME'));
      await assert.rejects(saver.forkThread('f1', { ttl: 'soon' }), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
      await assert.rejects(saver.forkThread('f2', { fromCheckpoint: 'never' }), (e) => isOffshootError(e, 'NOT_FOUND'));
      await assert.rejects(saver.checkpoint('', { k: 'v' }), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
      await assert.rejects(saver.promote('ghost'), (e) => isOffshootError(e, 'NOT_FOUND'));
      const before = await snapshot(saver, T);
      await assert.rejects(saver.rollback('never'), (e) => isOffshootError(e, 'NOT_FOUND'));
      assert.deepEqual(await snapshot(saver, T), before, 'a refused rollback reopens on the unchanged branch');
      assert.equal((await app.invoke({ n: 3 }, T)).n, 4);
    } finally {
      await saver.close();
    }
    await assert.rejects(saver.forkThread('late'), (e) => isOffshootError(e, 'USAGE'));
  });

  test('await using closes the saver at the end of the scope', async () => {
    let path: string;
    {
      await using saver = await OffshootSaver.session(daemon.sock, 'scoped');
      path = saver.path;
      await buildGraph(saver).invoke({ n: 1 }, T);
    }
    const client = await connect(daemon.sock);
    const open = (await client.status()).filter((s) => s.db === 'scoped');
    client.close();
    assert.deepEqual(open, []);
    assert.ok(path.endsWith('main.db'));
  });
});

describe('a kill -9 of the daemon after checkpoint() loses nothing checkpointed', { timeout: 120_000 }, () => {
  test('the checkpoint survives in the store, read back with the stock SqliteSaver', async () => {
    const daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    const tmp = mkdtempSync(join(tmpdir(), 'offshoot-lg-'));
    try {
      const saver = await OffshootSaver.session(daemon.sock, 'crash');
      const app = buildGraph(saver);
      await app.invoke({ n: 1 }, T);
      await app.invoke({ n: 7 }, T);
      await saver.checkpoint('durable');
      const durable = await snapshot(saver, T);
      daemon.proc.kill('SIGKILL');
      await new Promise((r) => daemon.proc.once('exit', r));
      await saver.close().catch(() => undefined);

      const out = join(tmp, 'exported.db');
      execFileSync(OFFSHOOT_BIN, ['-store', daemon.store, 'export', 'crash@main@durable', out]);
      const stock = SqliteSaver.fromConnString(out);
      try {
        assert.deepEqual(await snapshot(stock, T), durable);
      } finally {
        stock.db.close();
      }
    } finally {
      await daemon.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
