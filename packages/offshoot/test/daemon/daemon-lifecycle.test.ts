import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defaultSocketPath } from '../../src/protocol/socket-path.js';
import { canonicalStore, parseStoreSpec } from '../../src/store/store-spec.js';
import type { Response } from '../../src/protocol/wire.js';
import { dump, runSql } from '../ops/sqlite-cli.js';
import { LineClient, makeStoreDir, startDaemon, until, type StoreDir } from './daemon-process.js';

// Starts serve expecting it to fail; returns its exit code and stderr.
function serveFails(s: StoreDir, args: string[], env: NodeJS.ProcessEnv = {}): { code: number; stderr: string } {
  const r = s.cli(['serve', ...args], env);
  assert.notEqual(r.code, 0, `serve ${args.join(' ')} should fail`);
  assert.equal(r.stdout, '', 'nothing is announced on failure');
  return { code: r.code, stderr: r.stderr };
}

describe('serve: socket, lock and flags', () => {
  let s: StoreDir;

  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
  });

  after(() => s.cleanup());

  test('the socket is 0600, the store is locked, and a second daemon on the store is refused', async () => {
    const d = await startDaemon(s);
    try {
      const st = lstatSync(d.sock);
      assert.ok(st.isSocket());
      assert.equal(st.mode & 0o777, 0o600);
      const lock = JSON.parse(readFileSync(path.join(s.store, 'daemon.lock'), 'utf8')) as {
        pid: number;
        socket: string;
      };
      assert.equal(lock.pid, d.proc.pid);
      assert.equal(lock.socket, d.sock);

      const second = serveFails(s, ['-socket', s.file('other.sock')]);
      assert.equal(second.code, 6, 'busy class');
      assert.match(
        second.stderr,
        new RegExp(
          `another offshoot daemon \\(pid ${d.proc.pid}\\) already uses the checkout root .*, serving on ${d.sock.replace(/[.]/g, '\\.')}`,
        ),
      );
      assert.ok(!existsSync(s.file('other.sock')), 'the refused daemon left no socket behind');

      // Another store on the same (live) socket is refused too, and the live socket is left alone.
      const t = makeStoreDir();
      try {
        const clash = serveFails(t, ['-socket', d.sock]);
        assert.match(clash.stderr, /socket .* is in use/);
        assert.deepEqual(await d.request({ op: 'dbs' }), { ok: true, databases: ['app'] });
      } finally {
        t.cleanup();
      }
    } finally {
      assert.equal(await d.stop(), 0);
    }
    assert.ok(!existsSync(d.sock), 'the socket file is removed on shutdown');
    assert.ok(!existsSync(path.join(s.store, 'daemon.lock')), 'the lock is released on shutdown');
  });

  test('a stale socket file and a stale lock (dead pid) are replaced', async () => {
    const sock = s.file('stale.sock');
    // A listener killed with SIGKILL never unlinks its socket.
    const child = spawn(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    await new Promise((r) => child.once('exit', r));
    assert.ok(lstatSync(sock).isSocket(), 'a stale socket file is left behind');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(
      path.join(s.store, 'daemon.lock'),
      JSON.stringify({ pid: dead, socket: '/gone.sock', started_at: new Date().toISOString() }),
    );
    const d = await startDaemon(s, [], {}, sock);
    try {
      assert.deepEqual(await d.request({ op: 'dbs' }), { ok: true, databases: ['app'] });
    } finally {
      await d.stop();
    }
  });

  test('a regular file at the socket path is never removed; an over-long path is refused', () => {
    const file = s.file('not-a-socket');
    writeFileSync(file, 'keep me');
    assert.match(serveFails(s, ['-socket', file]).stderr, /exists and is not a socket/);
    assert.equal(readFileSync(file, 'utf8'), 'keep me');

    const long = path.join(s.dir, 'x'.repeat(120 - s.dir.length), 'd.sock');
    const r = serveFails(s, ['-socket', long]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /a unix socket path may be at most 107/);
  });

  test('bad flags are refused before anything listens', () => {
    const sock = ['-socket', s.file('f.sock')];
    const cases: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
      [['-flush-every', '-1s'], /-flush-every must not be negative/],
      [['-reap-every', '-1m'], /-reap-every must not be negative/],
      [['-gc-grace', 'soon'], /invalid duration/],
      [['-snapshot-every', '0'], /-snapshot-every "0": must be an integer of at least 1/],
      [['-ro-cache-budget', '-5M'], /-ro-cache-budget/],
      [['-token', 'x'.repeat(20)], /-token requires -http/],
      [['-http-allow-non-loopback'], /-http-allow-non-loopback requires -http/],
      [['-http', '0.0.0.0:0'], /refusing to listen on a non-loopback address/],
      [['-http', '0.0.0.0:0', '-http-allow-non-loopback'], /a non-loopback listener needs an explicit token/],
      [['-http', '127.0.0.1:0', '-token', 'short'], /too short/],
    ];
    for (const [flags, re, env] of cases) {
      const r = serveFails(s, [...sock, ...flags], env);
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re, flags.join(' '));
    }
    assert.ok(!existsSync(s.file('f.sock')));
  });

  test("without -socket, serve and the session commands meet at the store's default socket", async () => {
    const env = { XDG_CACHE_HOME: s.file('c') };
    const d = await startDaemon(s, [], env, null);
    try {
      assert.equal(d.sock, defaultSocketPath(canonicalStore(parseStoreSpec(s.store)), env));
      const r = s.cli(['session', 'dbs'], env);
      assert.equal(r.stdout, 'app\n', r.stderr);
    } finally {
      await d.stop();
    }
  });

  test('session open issued as the daemon starts (serve & on the line before) waits for it instead of failing', async () => {
    const sock = s.file('late.sock');
    const bin = fileURLToPath(new URL('../../../../offshoot', import.meta.url));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OFFSHOOT_')));
    const opener = spawn(bin, ['-store', s.store, 'session', 'open', 'app', '-socket', sock], {
      cwd: s.dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    opener.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    opener.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = new Promise<number | null>((resolve) => opener.once('exit', resolve));
    const d = await startDaemon(s, [], {}, sock);
    try {
      assert.equal(await code, 0, err);
      assert.equal(out, `${path.join(s.store, 'checkouts', 'app', 'main.db')}\n`);
      assert.equal(s.cli(['session', 'close', 'app', '-socket', sock]).code, 0);
    } finally {
      await d.stop();
    }
  });

  test('session commands report a missing daemon as unavailable', () => {
    const r = s.cli(['session', 'status', '-socket', s.file('nobody.sock')]);
    assert.equal(r.code, 8);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(
      r.stderr,
      new RegExp(`^offshoot: no daemon is running at ${s.file('nobody.sock').replace(/[.]/g, '\\.')}`),
    );
  });

  test('the HTTP listener shares the dispatch, refuses export and reports health', async () => {
    const token = 'lifecycle-token-0123456789';
    const d = await startDaemon(s, ['-http', '127.0.0.1:0'], { OFFSHOOT_TOKEN: token });
    try {
      await until(() => /listening on /.test(d.stderr()), 'the http listener');
      const addr = /listening on (\S+)/.exec(d.stderr())?.[1] ?? '';
      assert.doesNotMatch(d.stderr(), new RegExp(token), 'an explicit token is never printed');
      const health = (await (await fetch(`http://${addr}/healthz`)).json()) as { ok: boolean; sessions: number };
      assert.deepEqual(health, { ok: true, sessions: 0 });
      const rpc = async (body: unknown): Promise<{ status: number; body: Response }> => {
        const res = await fetch(`http://${addr}/rpc`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Response };
      };
      assert.deepEqual((await rpc({ op: 'dbs' })).body, { ok: true, databases: ['app'] });
      const ex = await rpc({ op: 'export', db: 'app', path: s.file('http.db') });
      assert.equal(ex.status, 400);
      assert.equal(ex.body.ok, false);
      assert.ok(!existsSync(s.file('http.db')));
      const opened = await rpc({ op: 'open', db: 'app' });
      assert.equal(opened.body.ok, true, JSON.stringify(opened.body));
      const again = (await (await fetch(`http://${addr}/healthz`)).json()) as { sessions: number };
      assert.equal(again.sessions, 1);
      const metrics = await (
        await fetch(`http://${addr}/metrics`, { headers: { Authorization: `Bearer ${token}` } })
      ).text();
      assert.match(metrics, /^offshoot_sessions_open 1$/m);
      assert.match(metrics, /^offshoot_capture_lag_bytes\{db="app",branch="main"\} \d+$/m);
      assert.deepEqual((await rpc({ op: 'close', db: 'app' })).body, { ok: true });
    } finally {
      await d.stop();
    }
  });
});

describe('graceful shutdown', () => {
  let s: StoreDir;

  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
  });

  after(() => s.cleanup());

  for (const how of ['SIGTERM', 'the shutdown op'] as const) {
    test(`${how} flushes open sessions before exiting`, async () => {
      const d = await startDaemon(s, ['-flush-every', '0']);
      try {
        const open = s.cli(['session', 'open', 'app', '-socket', d.sock]);
        assert.equal(open.code, 0, open.stderr);
        const checkout = open.stdout.trim();
        runSql(checkout, `CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES ('${how}');`);
        const before = (await d.request({ op: 'status' })).sessions?.[0]?.durable_txid ?? 0;
        // A client that keeps an idle connection open is disconnected, not waited for.
        const idle = await LineClient.connect(d.sock);
        assert.deepEqual(await idle.request({ op: 'dbs' }), { ok: true, databases: ['app'] });
        const started = Date.now();
        if (how === 'SIGTERM') d.proc.kill('SIGTERM');
        else {
          const r = s.cli(['session', 'shutdown', '-socket', d.sock]);
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.stdout, '');
        }
        assert.equal(await d.exited, 0);
        await idle.closed;
        assert.doesNotMatch(d.stderr(), /shutdown did not finish within/, 'the shutdown did not wait out its deadline');
        assert.ok(Date.now() - started < 25_000, 'nor anything near its 30 s');
        assert.match(d.stderr(), /offshoot: session: app@main: flushed kind=manual/);
        assert.match(d.stderr(), /offshoot: session: app@main: session_closed\n/);
        assert.ok(!existsSync(d.sock));
        const out = s.file(`after-${how === 'SIGTERM' ? 'term' : 'op'}.db`);
        const ex = s.cli(['export', 'app', out]);
        assert.equal(ex.code, 0, ex.stderr);
        assert.equal(dump(out), dump(checkout), 'the head holds every write made before the shutdown');
        assert.ok(statSync(out).size > 0);
        const st = s.cli(['status', 'app']);
        assert.match(
          st.stdout,
          new RegExp(`app@main state=idle .*txid=${before + 1} `),
          'the shutdown flushed once and released the lease',
        );
      } finally {
        await d.stop();
      }
    });
  }
});
