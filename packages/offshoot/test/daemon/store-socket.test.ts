// The default daemon socket belongs to the store, not to how its path was typed, and a daemon refuses requests
// that say they are for another store: one `./.offshoot` must never drive another directory's daemon.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  assertDaemonError,
  type DaemonProcess,
  makeStoreDir,
  request,
  startDaemon,
  until,
  type StoreDir,
} from './daemon-process.js';
import { runSql } from '../ops/sqlite-cli.js';

const bin = path.join(fileURLToPath(new URL('../../../../', import.meta.url)), 'offshoot');

describe('the default socket follows the canonical store', { timeout: 120_000 }, () => {
  let a: StoreDir;
  let b: StoreDir;
  let env: NodeJS.ProcessEnv;
  let daemon: ChildProcess;
  let sock = '';

  before(async () => {
    a = makeStoreDir();
    b = makeStoreDir();
    env = { XDG_CACHE_HOME: a.file('c') };
    for (const s of [a, b]) assert.equal(s.cli(['create', 'app']).code, 0);
    // Both stores are spelled `./s`, each from its own directory: the literal spec is the same text.
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const k of ['OFFSHOOT_STORE', 'OFFSHOOT_SOCKET']) delete childEnv[k];
    daemon = spawn(bin, ['-store', './s', 'serve', '-flush-every', '0', '-reap-every', '0'], {
      cwd: a.dir,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    daemon.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    await until(() => out.includes('offshoot serving on'), 'the daemon to serve');
    sock = /offshoot serving on (.+)\n/.exec(out)?.[1] ?? '';
  });

  after(async () => {
    const exited = new Promise((r) => daemon.once('exit', r));
    daemon.kill('SIGTERM');
    await exited;
    a.cleanup();
    b.cleanup();
  });

  test("another directory's ./s finds no daemon instead of driving this one", () => {
    const r = b.cli(['-store', './s', 'session', 'open', 'app'], env);
    assert.equal(r.code, 8, `expected no daemon for b's store: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /no daemon is running/);
  });

  test('the same store spelled as an absolute path finds its daemon', () => {
    const r = a.cli(['session', 'dbs'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'app\n');
  });

  test("a session command pointed at another store's daemon is refused, naming both stores", () => {
    const r = b.cli(['session', 'open', 'app', '-socket', sock], env);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /serves store .*\/s, not .*\/s/);
    assert.equal(r.stderr.includes(b.store), true, r.stderr);
  });

  test('a request that names no store still works; one naming another store is refused', async () => {
    const plain = await request(sock, { op: 'dbs' });
    assert.equal(plain.ok, true, JSON.stringify(plain));
    const own = await request(sock, { op: 'dbs', store: a.store });
    assert.equal(own.ok, true, JSON.stringify(own));
    assertDaemonError(await request(sock, { op: 'dbs', store: b.store }), 'INVALID_ARGUMENT', /serves store/);
    assertDaemonError(await request(sock, { op: 'dbs', store: 's3://other-bucket/x' }), 'INVALID_ARGUMENT');
  });
});

describe('a -socket alone reaches its daemon from any directory', { timeout: 120_000 }, () => {
  let s: StoreDir;
  let d: DaemonProcess;
  let elsewhere = '';

  // The CLI run from a directory with no store in it, naming neither -store nor $OFFSHOOT_STORE: only the socket.
  const cli = (args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['OFFSHOOT_STORE', 'OFFSHOOT_SOCKET']) delete env[k];
    const r = spawnSync(bin, [...args, '-socket', d.sock], { cwd: elsewhere, env, encoding: 'utf8' });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    elsewhere = mkdtempSync(path.join(os.tmpdir(), 'offshoot-elsewhere-'));
  });

  after(async () => {
    await d.stop();
    s.cleanup();
    rmSync(elsewhere, { recursive: true, force: true });
  });

  test('every session command works with just the socket, and shutdown stops the daemon', async () => {
    const dbs = cli(['session', 'dbs']);
    assert.equal(dbs.code, 0, dbs.stderr);
    assert.equal(dbs.stdout, 'app\n');
    const open = cli(['session', 'open', 'app']);
    assert.equal(open.code, 0, open.stderr);
    runSql(open.stdout.trim(), 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
    const flush = cli(['session', 'flush', 'app', 'one']);
    assert.equal(flush.code, 0, flush.stderr);
    const status = cli(['session', 'status']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /app@main/);
    const branches = cli(['session', 'branches', 'app']);
    assert.equal(branches.code, 0, branches.stderr);
    assert.match(branches.stdout, /app@main state=active/);
    const close = cli(['session', 'close', 'app']);
    assert.equal(close.code, 0, close.stderr);
    assert.equal(existsSync(path.join(elsewhere, '.offshoot')), false, 'no store was made where the CLI ran');
    const shutdown = cli(['session', 'shutdown']);
    assert.equal(shutdown.code, 0, shutdown.stderr);
    assert.equal(await d.exited, 0);
  });
});
