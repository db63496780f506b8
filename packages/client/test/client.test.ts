import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { connect, isOffshootError, type Client, type EventEnvelope } from '../src/index.js';
import { dump, startDaemon, type TestDaemon } from '../src/testkit.js';

process.env['OFFSHOOT_BIN'] = fileURLToPath(new URL('../../../offshoot', import.meta.url));

function sql(path: string, text: string): void {
  execFileSync('sqlite3', ['-bail', path, text]);
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('client against a real daemon', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let c: Client;
  const tmp = mkdtempSync(join(tmpdir(), 'offshoot-'));

  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    c = await connect(daemon.sock);
  });
  after(async () => {
    c.close();
    await daemon.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('create and dbs; a duplicate create is ALREADY_EXISTS', async () => {
    assert.deepEqual(await c.dbs(), []);
    await c.create('zeta');
    await c.create('app');
    assert.deepEqual(await c.dbs(), ['app', 'zeta']);
    await assert.rejects(c.create('app'), (e) => isOffshootError(e, 'ALREADY_EXISTS'));
    await assert.rejects(
      c.create('Bad Name'),
      (e) => isOffshootError(e, 'INVALID_NAME') || isOffshootError(e, 'INVALID_ARGUMENT'),
    );
  });

  test('a session captures writes; status is fully typed; flush makes them durable as a checkpoint', async () => {
    const s = await c.open('app');
    assert.equal(s.db, 'app');
    assert.equal(s.branch, 'main');
    assert.ok(existsSync(s.path));
    await assert.rejects(c.open('app', 'main'), (e) => isOffshootError(e) && e.code !== 'INTERNAL');
    await assert.rejects(c.checkout('app', 'main'), (e) => isOffshootError(e));

    sql(s.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES (1),(2),(3);');
    // Capture usually catches up within one poll, so the lag is only checked for its type here.
    const lagging = await until(
      async () => (await c.status()).find((x) => x.db === 'app' && x.branch === 'main'),
      'the session in status',
    );
    assert.ok(Number.isInteger(lagging.capture_lag_bytes) && lagging.capture_lag_bytes >= 0);
    assert.equal(lagging.db, 'app');
    assert.equal(lagging.checkout, s.path);
    assert.match(lagging.holder, /\/\d+\/[0-9a-f]{16}$/);
    assert.equal(typeof lagging.epoch, 'number');
    assert.equal(lagging.durable_txid, 1);

    const txid = await s.flush('v1', { meta: { step: 'one' } });
    assert.equal(txid, 2);
    const [after1] = await c.status();
    assert.equal(after1?.durable_txid, 2);
    assert.equal(after1?.capture_lag_bytes, 0);
    assert.equal(typeof after1?.last_flush_at, 'string');
    assert.equal(after1?.flush_error, undefined);
    assert.equal(after1?.error, undefined);

    await assert.rejects(s.flush(undefined, { meta: { a: 'b' } }), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
    await assert.rejects(s.flush('v1'), (e) => isOffshootError(e, 'ALREADY_EXISTS'));
    sql(s.path, 'INSERT INTO t(v) VALUES (4);');
    assert.equal(await s.flush(), 3);
    await s.close();
    assert.deepEqual(await c.status(), []);
  });

  test('branches reports shared, state and checkpoints', async () => {
    const [main] = await c.branches('app');
    assert.equal(main?.branch, 'main');
    assert.equal(main?.protected, true);
    assert.equal(main?.shared, false);
    assert.equal(main?.state, 'idle');
    assert.equal(main?.head_txid, 3);
    assert.deepEqual(main?.checkpoints, ['init', 'v1']);
    assert.deepEqual(
      main?.checkpoints_v2.map((cp) => [cp.name, cp.txid]),
      [
        ['init', 1],
        ['v1', 2],
      ],
    );
    await assert.rejects(c.branches('nope'), (e) => isOffshootError(e, 'NOT_FOUND'));
  });

  test('fork, checkout, touch, compact, rollback and promote', async () => {
    const forkTxid = await c.fork('app', 'main', 'exp', { from: 'v1', ttl: '1h', meta: { why: 'test' } });
    assert.equal(typeof forkTxid, 'number');
    const exp = (await c.branches('app')).find((b) => b.branch === 'exp');
    assert.equal(exp?.shared, true);
    assert.equal(exp?.protected, false);
    assert.deepEqual(exp?.checkpoints, ['fork']);
    assert.ok(exp?.ttl !== undefined && exp.ttl !== '');

    const path = await c.checkout('app', 'exp');
    assert.match(await dump(path), /INSERT INTO t VALUES\(3,'3'\);/);
    assert.doesNotMatch(await dump(path), /VALUES\(4,/, 'forked from v1, before row 4');

    const touched = await c.touch('app', 'exp', { ttl: '2h' });
    assert.equal(typeof touched.ttl, 'string');
    assert.match(touched.touched_at, /^\d{4}-/);
    await assert.rejects(c.touch('app', 'exp', { ttl: '-1s' }), (e) => isOffshootError(e));

    const compacted = await c.compact('app', 'exp');
    assert.equal(typeof compacted, 'number');
    assert.equal((await c.branches('app')).find((b) => b.branch === 'exp')?.shared, false);

    const s = await c.open('app', 'exp');
    sql(s.path, 'DELETE FROM t;');
    await s.flush('emptied');
    await s.close();
    const back = await c.rollback('app', 'exp', 'compact');
    assert.match(await dump(back), /VALUES\(3,'3'\)/);

    await c.fork('app', 'main', 'target');
    await assert.rejects(c.promote('app', 'exp', 'main'), (e) => isOffshootError(e, 'PROTECTED'));
    const promoted = await c.promote('app', 'exp', 'target');
    assert.equal(typeof promoted, 'number');
    assert.deepEqual((await c.branches('app')).find((b) => b.branch === 'target')?.checkpoints, ['promote']);
  });

  test('promote with ifHead: a compare-and-swap on the target head, BASE_MOVED when it moved', async () => {
    await c.create('cas');
    const head = await c.fork('cas', 'main', 'run-a');
    await c.fork('cas', 'main', 'run-b');
    for (const run of ['run-a', 'run-b']) {
      const s = await c.open('cas', run);
      sql(s.path, `CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('${run}');`);
      await s.flush('done');
      await s.close();
    }
    const landed = await c.request({
      op: 'promote',
      db: 'cas',
      branch: 'run-a',
      name: 'main',
      force: true,
      if_head: head,
    });
    assert.equal((landed.result as { if_head?: number }).if_head, head, 'the daemon says it checked');
    await assert.rejects(c.promote('cas', 'run-b', 'main', { force: true, ifHead: head }), (e: unknown) => {
      assert.ok(isOffshootError(e, 'BASE_MOVED'), String(e));
      assert.match(e.message, new RegExp(`cas@main moved since txid ${head}`));
      assert.match(e.hint ?? '', /if_head/);
      return true;
    });
    assert.match(await dump(await c.checkout('cas')), /'run-a'/, 'the refused promote changed nothing');
    await assert.rejects(
      c.request({ op: 'promote', db: 'cas', branch: 'run-b', name: 'main', force: true, if_head: -1 }),
      (e: unknown) => isOffshootError(e, 'INVALID_ARGUMENT'),
    );
    const now = (await c.branches('cas')).find((b) => b.branch === 'main')?.head_txid;
    assert.equal(typeof (await c.promote('cas', 'run-b', 'main', { force: true, ifHead: now })), 'number');
  });

  test('protect, unprotect and destroy', async () => {
    await c.fork('app', 'main', 'keep');
    assert.deepEqual(await c.protect('app', 'keep'), { protected: true, changed: true });
    assert.deepEqual(await c.protect('app', 'keep'), { protected: true, changed: false });
    await assert.rejects(c.destroy('app', 'keep'), (e) => isOffshootError(e, 'PROTECTED'));
    assert.deepEqual(await c.unprotect('app', 'keep'), { protected: false, changed: true });
    await c.destroy('app', 'keep');
    assert.equal(
      (await c.branches('app')).some((b) => b.branch === 'keep'),
      false,
    );
    await assert.rejects(c.destroy('app', 'keep'), (e) => isOffshootError(e, 'NOT_FOUND'));
  });

  test('export and checkoutAt return durable state', async () => {
    const out = join(tmp, 'sub', 'v1.db');
    const txid = await c.export('app', 'main', out, { checkpoint: 'v1' });
    assert.equal(txid, 2);
    assert.match(await dump(out), /VALUES\(3,'3'\)/);
    assert.doesNotMatch(await dump(out), /VALUES\(4,/);
    await assert.rejects(c.export('app', 'main', out), (e) => isOffshootError(e, 'ALREADY_EXISTS'));
    await c.export('app', 'main', out, { force: true });
    assert.match(await dump(out), /VALUES\(4,/);

    const ro = await c.checkoutAt('app', 'main', 'v1');
    assert.equal(statSync(ro).mode & 0o777, 0o444);
    const again = join(tmp, 'v1-again.db');
    await c.export('app', 'main', again, { checkpoint: 'v1' });
    assert.equal(await dump(ro), await dump(again), 'the read-only checkout is checkpoint v1');
    assert.equal(await c.checkoutAt('app', 'main', 'v1', { force: true }), ro);
    await assert.rejects(c.checkoutAt('app', 'main', 'nope'), (e) => isOffshootError(e, 'NOT_FOUND'));
  });

  test('diff reports rows as JSON; a batch fork makes every name or none', async () => {
    const forks = ['ep-a', 'ep-b', 'ep-c'];
    const txid = await c.fork('app', 'main', forks, { from: 'v1', ttl: '1h' });
    assert.equal(txid, 2);
    const listed = (await c.branches('app')).filter((b) => forks.includes(b.branch));
    assert.deepEqual(
      listed.map((b) => [b.branch, b.head_txid, b.ttl]),
      forks.map((f) => [f, 2, '1h0m0s']),
    );
    await assert.rejects(c.fork('app', 'main', ['ep-d', 'ep-a']), (e) => isOffshootError(e, 'ALREADY_EXISTS'));
    assert.equal(
      (await c.branches('app')).find((b) => b.branch === 'ep-d'),
      undefined,
      'nothing was forked',
    );

    const s = await c.open('app', 'ep-b');
    sql(s.path, "INSERT INTO t(v) VALUES ('from ep-b');");
    await s.close();
    const d = await c.diff('app@main@v1', 'app@ep-b');
    const t = d.tables.find((x) => x.table === 't');
    assert.equal(t?.status, 'changed');
    assert.deepEqual(t?.added, [{ id: 4, v: 'from ep-b' }]);
    assert.equal(d.summary_only, false);
    const summary = await c.diff('app@main@v1', 'app@ep-b', { summary: true });
    assert.equal(summary.summary_only, true);
    assert.deepEqual(summary.tables.find((x) => x.table === 't')?.added, []);
    for (const f of forks) await c.destroy('app', f);
  });

  test('events() sees session and flush events, typed by type', async () => {
    let subscribed: () => void = () => undefined;
    const live = new Promise<void>((resolve) => (subscribed = resolve));
    const events = c.events({ onSubscribed: () => subscribed() });
    const received: EventEnvelope[] = [];
    const reader = (async () => {
      for await (const ev of events) {
        received.push(ev);
        if (ev.type === 'session_closed') return;
      }
    })();
    await live;
    const s = await c.open('app', 'exp');
    sql(s.path, 'INSERT INTO t(v) VALUES (9);');
    const txid = await s.flush('ev');
    await s.close();
    await reader;
    assert.deepEqual(
      received.map((e) => e.type),
      ['session_opened', 'flushed', 'session_closed'],
    );
    const opened = received[0]!;
    assert.ok(opened.type === 'session_opened');
    assert.equal(opened.db, 'app');
    assert.equal(opened.branch, 'exp');
    assert.equal(typeof opened.detail.epoch, 'number');
    const flushed = received[1]!;
    assert.ok(flushed.type === 'flushed');
    assert.equal(flushed.detail.kind, 'manual');
    assert.equal(flushed.detail.txid, txid);
    assert.match(flushed.ts, /Z$/);
  });

  test('an agent connection gets the agent rules; checkout keeps uncheckpointed writes unless discard', async () => {
    await c.create('agentdb');
    await c.fork('agentdb', 'main', 'work');
    const agent = await connect(daemon.sock, { actor: 'agent' });
    try {
      await assert.rejects(agent.promote('agentdb', 'work', 'main', { force: true }), (e: unknown) => {
        assert.ok(isOffshootError(e) && e.code === 'PROTECTED', String(e));
        assert.match(e.hint ?? '', /allow_force/);
        return true;
      });
    } finally {
      agent.close();
    }
    const forcing = await connect(daemon.sock, { actor: 'agent', allowForce: true });
    try {
      assert.ok((await forcing.promote('agentdb', 'work', 'main', { force: true })) >= 1);
    } finally {
      forcing.close();
    }
    const path = await c.checkout('agentdb', 'work');
    sql(path, 'CREATE TABLE kept(v); INSERT INTO kept VALUES (1);');
    assert.equal(await c.checkout('agentdb', 'work'), path);
    assert.match(await dump(path), /CREATE TABLE kept/);
    await c.checkout('agentdb', 'work', { discard: true });
    assert.doesNotMatch(await dump(path), /CREATE TABLE kept/);
  });

  test('shutdown stops the daemon; later connections fail with CONNECTION_FAILED', async () => {
    const other = await connect(daemon.sock);
    await other.shutdown();
    await until(async () => (daemon.proc.exitCode !== null ? true : undefined), 'daemon exit');
    assert.equal(daemon.proc.exitCode, 0);
    await assert.rejects(other.dbs(), (e) => isOffshootError(e, 'CONNECTION_CLOSED'));
    await assert.rejects(connect(daemon.sock), (e) => isOffshootError(e, 'CONNECTION_FAILED'));
  });
});
