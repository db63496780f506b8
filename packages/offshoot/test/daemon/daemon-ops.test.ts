import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BranchInfo, EventEnvelope } from '../../src/protocol/wire.js';
import { dump, runSql } from '../ops/sqlite-cli.js';
import {
  assertDaemonError,
  LineClient,
  makeStoreDir,
  startDaemon,
  type DaemonProcess,
  type StoreDir,
} from './daemon-process.js';

describe('daemon ops over the unix socket', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = makeStoreDir();
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('dbs is empty at first, then sorted; create refuses a duplicate', async () => {
    assert.deepEqual(await d.request({ op: 'dbs' }), { ok: true, databases: [] });
    assert.deepEqual(await d.request({ op: 'create', db: 'zeta' }), { ok: true });
    assert.deepEqual(await d.request({ op: 'create', db: 'alpha' }), { ok: true });
    assert.deepEqual(await d.request({ op: 'dbs' }), { ok: true, databases: ['alpha', 'zeta'] });
    assertDaemonError(await d.request({ op: 'create', db: 'alpha' }), 'ALREADY_EXISTS');
    assertDaemonError(await d.request({ op: 'create' }), 'INVALID_ARGUMENT', /db is required/);
    assertDaemonError(await d.request({ op: 'create', db: 'Bad Name' }), 'INVALID_NAME');
  });

  test('one connection carries many requests; unknown ops and bad lines are answered in-band', async () => {
    const c = await LineClient.connect(d.sock);
    try {
      const unknown = await c.request({ op: 'frobnicate' });
      assertDaemonError(unknown, 'INVALID_ARGUMENT');
      assert.equal(unknown.error, 'daemon: unknown op "frobnicate"');
      c.send('this is not json\n');
      assertDaemonError(await c.next(), 'INVALID_ARGUMENT', /bad request/);
      const badType = await c.request({ op: 'branches', db: 'alpha', force: 'yes' });
      assertDaemonError(badType, 'INVALID_ARGUMENT');
      assert.equal(badType.error, 'daemon: bad request: force must be a boolean');
      for (let i = 0; i < 5; i++)
        assert.deepEqual(await c.request({ op: 'dbs' }), { ok: true, databases: ['alpha', 'zeta'] });
      // Requests written back to back are still answered one by one, in order.
      c.send(`${JSON.stringify({ op: 'dbs' })}\n${JSON.stringify({ op: 'status' })}\n`);
      assert.deepEqual(await c.next(), { ok: true, databases: ['alpha', 'zeta'] });
      assert.deepEqual(await c.next(), { ok: true, sessions: [] });
    } finally {
      c.close();
    }
  });

  test('a request line over 1 MiB is refused and the connection closed', async () => {
    const c = await LineClient.connect(d.sock);
    c.send(JSON.stringify({ op: 'dbs', path: 'x'.repeat((1 << 20) + 10) }) + '\n');
    assertDaemonError(await c.next(), 'INVALID_ARGUMENT', /exceeds 1048576 bytes/);
    await c.closed;
    assert.deepEqual(
      await d.request({ op: 'dbs' }),
      { ok: true, databases: ['alpha', 'zeta'] },
      'the daemon keeps serving',
    );
  });

  test('open, status, flush and close, with the guards that protect an open branch', async () => {
    const opened = await d.request({ op: 'open', db: 'alpha' });
    assert.equal(opened.ok, true, JSON.stringify(opened));
    assert.equal(opened.checkout, path.join(s.store, 'checkouts', 'alpha', 'main.db'));
    assertDaemonError(await d.request({ op: 'open', db: 'alpha', branch: 'main' }), 'SESSION_OPEN', /already open/);

    const st = await d.request({ op: 'status' });
    assert.equal(st.sessions?.length, 1);
    const info = st.sessions?.[0];
    assert.equal(info?.db, 'alpha');
    assert.equal(info?.branch, 'main');
    assert.equal(info?.checkout, opened.checkout);
    assert.match(info?.holder ?? '', /^.+\/\d+\/[0-9a-f]{16}$/);
    assert.equal(typeof info?.epoch, 'number');
    assert.equal(typeof info?.durable_txid, 'number');
    assert.equal(typeof info?.capture_lag_bytes, 'number');
    assert.equal(info?.error, undefined);

    for (const [op, extra] of [
      ['checkout', {}],
      ['destroy', { force: true }],
      ['rollback', { name: 'init' }],
      ['compact', {}],
    ] as const) {
      assertDaemonError(await d.request({ op, db: 'alpha', ...extra }), 'SESSION_OPEN', /close the session first/);
    }

    runSql(
      opened.checkout ?? '',
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t(b) VALUES ('one'), ('two');",
    );
    assertDaemonError(await d.request({ op: 'flush', db: 'alpha', meta: { k: 'v' } }), 'INVALID_ARGUMENT', /meta/);
    const f = await d.request({ op: 'flush', db: 'alpha', name: 'two-rows', meta: { run: '7' } });
    assert.equal(f.ok, true);
    assert.ok((f.txid ?? 0) > 1, `flush advanced the head: ${JSON.stringify(f)}`);
    assertDaemonError(await d.request({ op: 'flush', db: 'alpha', name: 'two-rows' }), 'ALREADY_EXISTS');
    assertDaemonError(await d.request({ op: 'flush', db: 'zeta' }), 'NOT_FOUND', /no session open on zeta@main/);

    const br = await d.request({ op: 'branches', db: 'alpha' });
    const main = br.branches?.find((b) => b.branch === 'main') as BranchInfo;
    assert.equal(main.state, 'active');
    assert.equal(main.shared, false);
    assert.equal(main.protected, true);
    assert.equal(main.head_txid, f.txid);
    assert.deepEqual(main.checkpoints, ['init', 'two-rows']);
    assert.deepEqual(
      main.checkpoints_v2.map((c) => [c.name, c.txid, typeof c.created_at]),
      [
        ['init', 1, 'string'],
        ['two-rows', f.txid, 'string'],
      ],
    );
    assert.equal(main.lease_holder, info?.holder);
    assert.equal(typeof main.touched_at, 'string');
    assert.ok(!JSON.stringify(br).includes('"run"'), 'no meta values are ever returned');

    // checkout-at is safe next to the session and needs a checkpoint.
    assertDaemonError(
      await d.request({ op: 'checkout-at', db: 'alpha' }),
      'INVALID_ARGUMENT',
      /checkpoint is required/,
    );
    const at = await d.request({ op: 'checkout-at', db: 'alpha', name: 'two-rows' });
    assert.equal(at.checkout, path.join(s.store, 'checkouts-ro', 'alpha', 'main@two-rows.db'));
    assert.equal(statSync(at.checkout ?? '').mode & 0o777, 0o444);
    assert.equal(dump(at.checkout ?? ''), dump(opened.checkout ?? ''));

    // A head fork flushes the open source first: the child holds writes that were never flushed by hand.
    runSql(opened.checkout ?? '', "INSERT INTO t(b) VALUES ('three');");
    assertDaemonError(await d.request({ op: 'fork', db: 'alpha', name: 'f1', ttl: 'none' }), 'INVALID_ARGUMENT');
    assertDaemonError(await d.request({ op: 'fork', db: 'alpha', name: 'f1', ttl: '0s' }), 'INVALID_ARGUMENT');
    assertDaemonError(await d.request({ op: 'fork', db: 'alpha' }), 'INVALID_ARGUMENT', /new branch name is required/);
    const fk = await d.request({ op: 'fork', db: 'alpha', name: 'f1', ttl: '1h', meta: { by: 'test' } });
    assert.equal(fk.ok, true, JSON.stringify(fk));
    assert.ok((fk.txid ?? 0) > (f.txid ?? 0), 'the fork point includes the pre-fork flush');
    const listed = (await d.request({ op: 'branches', db: 'alpha' })).branches?.find((b) => b.branch === 'f1');
    assert.equal(
      (fk.result as { expires_at: string | null }).expires_at,
      listed?.expires_at,
      'the reply says when the fork expires, as branches reports it',
    );
    const out = s.file('f1.db');
    assert.deepEqual(await d.request({ op: 'export', db: 'alpha', branch: 'f1', path: out }), {
      ok: true,
      txid: fk.txid,
    });
    assert.equal(dump(out), dump(opened.checkout ?? ''));

    // The session's branch is the target of a promote here: refused, whatever force says.
    assertDaemonError(
      await d.request({ op: 'promote', db: 'alpha', branch: 'f1', name: 'main', force: true }),
      'SESSION_OPEN',
      /close the session first/,
    );

    assert.deepEqual(await d.request({ op: 'close', db: 'alpha' }), { ok: true });
    assertDaemonError(await d.request({ op: 'close', db: 'alpha' }), 'NOT_FOUND');
    assert.deepEqual(await d.request({ op: 'status' }), { ok: true, sessions: [] });
  });

  test('promote flushes an open source first', async () => {
    const opened = await d.request({ op: 'open', db: 'alpha', branch: 'f1' });
    assert.equal(opened.ok, true, JSON.stringify(opened));
    runSql(opened.checkout ?? '', "INSERT INTO t(b) VALUES ('from-f1');");
    const pr = await d.request({ op: 'promote', db: 'alpha', branch: 'f1', name: 'main', force: true });
    assert.equal(pr.ok, true, JSON.stringify(pr));
    const out = s.file('promoted.db');
    await d.request({ op: 'export', db: 'alpha', path: out });
    assert.match(dump(out), /from-f1/);
    assert.deepEqual(await d.request({ op: 'close', db: 'alpha', branch: 'f1' }), { ok: true });
  });

  test('the at-rest ops: touch, protect, promote, rollback, compact, export, diff, gc, destroy', async () => {
    const ttl = async (): Promise<string | undefined> =>
      (await d.request({ op: 'branches', db: 'alpha' })).branches?.find((b) => b.branch === 'f1')?.ttl;
    assert.equal(await ttl(), '1h0m0s');
    assert.equal((await d.request({ op: 'touch', db: 'alpha', branch: 'f1' })).ok, true);
    assert.equal(await ttl(), '1h0m0s', 'an empty ttl keeps it');
    assert.equal((await d.request({ op: 'touch', db: 'alpha', branch: 'f1', ttl: '2h' })).ok, true);
    assert.equal(await ttl(), '2h0m0s');
    assert.equal((await d.request({ op: 'touch', db: 'alpha', branch: 'f1', ttl: 'none' })).ok, true);
    assert.equal(await ttl(), undefined, 'none clears it');
    // The one TTL grammar: zero clears a TTL, as none does (the earlier CLI's 0s).
    assert.equal((await d.request({ op: 'touch', db: 'alpha', branch: 'f1', ttl: '0s' })).ok, true);
    assertDaemonError(await d.request({ op: 'touch', db: 'alpha', branch: 'f1', ttl: '-5s' }), 'INVALID_ARGUMENT');

    assert.deepEqual(await d.request({ op: 'protect', db: 'alpha', branch: 'f1' }), {
      ok: true,
      result: { protected: true, changed: true },
    });
    assertDaemonError(await d.request({ op: 'destroy', db: 'alpha', branch: 'f1' }), 'PROTECTED');
    assert.deepEqual(await d.request({ op: 'unprotect', db: 'alpha', branch: 'f1' }), {
      ok: true,
      result: { protected: false, changed: true },
    });

    assertDaemonError(
      await d.request({ op: 'promote', db: 'alpha', branch: 'f1' }),
      'INVALID_ARGUMENT',
      /target branch is required/,
    );
    assertDaemonError(await d.request({ op: 'promote', db: 'alpha', branch: 'f1', name: 'main' }), 'PROTECTED');
    const pr = await d.request({ op: 'promote', db: 'alpha', branch: 'main', name: 'f1' });
    assert.equal(typeof pr.txid, 'number');
    // Additively, what the promote did: the undo point, the target's checkout, whether it was refreshed.
    assert.deepEqual(pr.result, {
      txid: pr.txid,
      backup: 'f1-pre-promote',
      checkout: path.join(s.store, 'checkouts', 'alpha', 'f1.db'),
      refreshed: (pr.result as { refreshed: boolean }).refreshed,
      source_live: false,
    });

    assertDaemonError(await d.request({ op: 'rollback', db: 'alpha', branch: 'f1', name: 'no-such' }), 'NOT_FOUND');
    const rb = await d.request({ op: 'rollback', db: 'alpha', branch: 'f1', name: 'promote' });
    assert.equal(rb.checkout, path.join(s.store, 'checkouts', 'alpha', 'f1.db'));
    const rolled = rb.result as { checkpoint: string; txid: number; backup: string; abandoned: unknown };
    assert.deepEqual(
      { checkpoint: rolled.checkpoint, txid: rolled.txid, backup: rolled.backup, abandoned: rolled.abandoned },
      { checkpoint: 'promote', txid: pr.txid, backup: 'f1-pre-rollback', abandoned: null },
    );
    const cp = await d.request({ op: 'compact', db: 'alpha', branch: 'f1' });
    assert.equal(cp.txid, pr.txid);

    assertDaemonError(
      await d.request({ op: 'export', db: 'alpha', path: 'relative.db' }),
      'INVALID_ARGUMENT',
      /must be absolute/,
    );
    assertDaemonError(await d.request({ op: 'export', db: 'alpha' }), 'INVALID_ARGUMENT', /path is required/);
    const out = s.file('at-init.db');
    assert.equal((await d.request({ op: 'export', db: 'zeta', name: 'init', path: out })).txid, 1);
    assert.ok(existsSync(out));
    assertDaemonError(await d.request({ op: 'export', db: 'zeta', name: 'init', path: out }), 'ALREADY_EXISTS');
    assert.equal((await d.request({ op: 'export', db: 'zeta', name: 'init', path: out, force: true })).ok, true);

    const df = await d.request({ op: 'diff', db: 'zeta', name: 'init', to: 'alpha@main', summary: true });
    assert.equal(df.ok, true, JSON.stringify(df));
    const tables = (df.result as { tables: Array<{ table: string; status: string }> }).tables;
    assert.deepEqual(
      tables.map((t) => [t.table, t.status]),
      [['t', 'added']],
    );
    assertDaemonError(await d.request({ op: 'diff', db: 'alpha' }), 'INVALID_ARGUMENT', /to is required/);

    // The history window (a day by default) would keep every state the rollback and compact left behind: a window
    // of 1ns keeps none but the heads'.
    assert.equal(s.cli(['config', 'alpha', 'history_window=1ns']).code, 0);
    const gc = await d.request({ op: 'gc', grace: '0s' });
    const r = gc.result as { tombstoned: number; deleted: number; backlog: number; reaped: string[] };
    assert.equal(gc.ok, true);
    assert.ok(r.tombstoned > 0, 'the rollback and compact left unreachable objects');
    assert.deepEqual(r.reaped, []);
    assertDaemonError(await d.request({ op: 'gc', grace: '-1s' }), 'INVALID_ARGUMENT');

    assert.deepEqual(await d.request({ op: 'destroy', db: 'alpha', branch: 'f1' }), {
      ok: true,
      result: { removed_checkout: true },
    });
    const names = (await d.request({ op: 'branches', db: 'alpha' })).branches?.map((b) => b.branch);
    assert.ok(!names?.includes('f1'));
    assertDaemonError(await d.request({ op: 'branches', db: 'nope' }), 'NOT_FOUND', /no database nope/);
  });

  test('subscribe acknowledges, then streams session events on that connection', async () => {
    const sub = await LineClient.connect(d.sock);
    try {
      assert.deepEqual(await sub.request({ op: 'subscribe' }), { ok: true });
      const opened = await d.request({ op: 'open', db: 'zeta' });
      assert.equal(opened.ok, true, JSON.stringify(opened));
      const first = await sub.eventsUntil((e) => e.type === 'session_opened');
      const ev = first[first.length - 1] as EventEnvelope;
      assert.equal(ev.v, 1);
      assert.equal(ev.db, 'zeta');
      assert.equal(ev.branch, 'main');
      assert.match(ev.ts, /^\d{4}-\d\d-\d\dT.*Z$/);
      assert.equal(typeof ev.detail?.holder, 'string');
      assert.equal(typeof ev.detail?.epoch, 'number');
      runSql(opened.checkout ?? '', 'CREATE TABLE z(x);');
      const f = await d.request({ op: 'flush', db: 'zeta' });
      const flushed = (await sub.eventsUntil((e) => e.type === 'flushed' && e.detail?.txid === f.txid)).pop();
      assert.equal(flushed?.detail?.kind, 'manual');
      assert.equal(typeof flushed?.detail?.duration_seconds, 'number');
      await d.request({ op: 'close', db: 'zeta' });
      const closed = (await sub.eventsUntil((e) => e.type === 'session_closed')).pop();
      assert.equal(closed?.db, 'zeta');
      assert.equal(closed?.detail, undefined, 'a clean close carries no error');
    } finally {
      sub.close();
    }
  });
});
