// Ephemeral forks of a real `offshoot serve` process: run under strace, a discarded episode (fork, open, write, flush,
// diff, close, destroy) makes no fsync of the store or of its checkout, only the liveness object's periodic write; a
// kept one is visible to the CLI; kill -9 loses the rest, and the restarted daemon removes the checkout it left.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Response } from '../../src/protocol/wire.js';
import { query, runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, startDaemon, until, type DaemonProcess, type StoreDir } from './daemon-process.js';

// strace runs the daemon and writes each fsync or fdatasync it makes, with the path of its descriptor.
// Under CI=true a missing strace is a failure (scripts/strace-env.sh installs it), never a skip.
const traced = spawnSync('strace', ['-qq', '-e', 'trace=fsync', 'true']).status === 0;
if (!traced && process.env.CI === 'true') throw new Error('strace is missing: run scripts/strace-env.sh');

/** Every file under dir, relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('ephemeral forks of a daemon process', { timeout: 600_000 }, () => {
  let s: StoreDir;
  let d: DaemonProcess | undefined;
  const trace = (): string => (existsSync(s.file('fsyncs.txt')) ? readFileSync(s.file('fsyncs.txt'), 'utf8') : '');
  const ok = async (req: Record<string, unknown>): Promise<Response> => {
    const res = await (d as DaemonProcess).request(req);
    assert.equal(res.ok, true, `${JSON.stringify(req)}: ${JSON.stringify(res)}`);
    return res;
  };

  before(async () => {
    s = makeStoreDir();
    const seed = s.file('seed.db');
    runSql(seed, 'CREATE TABLE t(x INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES (1), (2);');
    const made = s.cli(['create', 'app', '--from', seed]);
    assert.equal(made.code, 0, made.stderr);
  });

  after(async () => {
    await d?.stop();
    s?.cleanup();
  });

  it('a discarded episode makes no fsync outside the liveness object', {
    skip: !traced && 'strace is not available',
  }, async () => {
    d = await startDaemon(s, [], {}, s.file('d.sock'), [
      'strace',
      '-f',
      '-qq',
      '-y',
      '-e',
      'trace=fsync,fdatasync',
      '-o',
      s.file('fsyncs.txt'),
    ]);
    // The first fork at a fork point writes its pin into the liveness object, and the seed's first checkout builds
    // its (durable, shared) cache entry; later episodes write nothing.
    await ok({ op: 'fork', db: 'app', branch: 'main', name: 'warm', from: 'init', ephemeral: true });
    await ok({ op: 'checkout', db: 'app', branch: 'warm' });
    await ok({ op: 'destroy', db: 'app', branch: 'warm' });
    const data = filesUnder(path.join(s.store, 'data'));
    const refs = filesUnder(path.join(s.store, 'refs'));
    const from = trace().length;
    for (let i = 0; i < 2; i++) {
      await ok({ op: 'fork', db: 'app', branch: 'main', name: `ep${i}`, from: 'init', ephemeral: true });
      const { checkout } = await ok({ op: 'open', db: 'app', branch: `ep${i}` });
      runSql(checkout as string, `INSERT INTO t(v) VALUES ('episode ${i}');`);
      await ok({ op: 'flush', db: 'app', branch: `ep${i}` });
      const diff = await ok({ op: 'diff', db: 'app', branch: 'main', name: 'init', to: `app@ep${i}`, summary: true });
      assert.equal((diff.result as { tables: Array<{ status: string }> }).tables[0]?.status, 'changed');
      await ok({ op: 'close', db: 'app', branch: `ep${i}` });
      await ok({ op: 'destroy', db: 'app', branch: `ep${i}` });
    }
    // Whatever the daemon fsynced meanwhile, bar its liveness object's periodic write (and the directory it is in).
    const fsyncs = trace()
      .slice(from)
      .split('\n')
      .filter((l) => /\bf(data)?sync\(/.test(l) && !/\/liveness[/>]/.test(l));
    assert.deepEqual(fsyncs, [], 'no fsync of the store or of a checkout');
    assert.deepEqual(filesUnder(path.join(s.store, 'data')), data, 'no data object was written');
    assert.deepEqual(filesUnder(path.join(s.store, 'refs')), refs, 'no ref was written');
  });

  it('a kept fork is what the CLI sees; kill -9 loses the rest, and a restart removes its checkout', async () => {
    d ??= await startDaemon(s);
    await ok({ op: 'fork', db: 'app', branch: 'main', name: 'kept', from: 'init', ephemeral: true });
    const keptPath = (await ok({ op: 'checkout', db: 'app', branch: 'kept' })).checkout as string;
    runSql(keptPath, "INSERT INTO t(v) VALUES ('kept');");
    await ok({ op: 'checkpoint', db: 'app', branch: 'kept', name: 'k' });
    await ok({ op: 'fork', db: 'app', branch: 'main', name: 'left', from: 'init', ephemeral: true });
    const leftPath = (await ok({ op: 'checkout', db: 'app', branch: 'left' })).checkout as string;
    runSql(leftPath, "INSERT INTO t(v) VALUES ('lost');");
    const status = s.cli(['status', 'app', '--json']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /"branch": ?"kept"/, 'the CLI lists the kept branch');
    assert.doesNotMatch(status.stdout, /"branch": ?"left"/, 'the CLI never sees an ephemeral one');
    const lock = JSON.parse(readFileSync(path.join(s.store, 'daemon.lock'), 'utf8')) as { pid: number };
    process.kill(lock.pid, 'SIGKILL');
    await d.exited;
    d = undefined;
    assert.ok(existsSync(leftPath), 'a killed daemon leaves its checkout');
    assert.equal(existsSync(path.join(s.store, 'refs', 'app', 'left')), false, 'and nothing of it in the store');
    const out = s.file('kept.db');
    const exported = s.cli(['export', 'app@kept@k', out]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.equal(query(out, "SELECT v FROM t WHERE v = 'kept'").trim(), 'kept');
    d = await startDaemon(s);
    await until(() => !existsSync(leftPath), 'the restarted daemon to remove the lost checkout');
    assert.match((d as DaemonProcess).stderr(), /removed 1 checkout\(s\) of ephemeral forks/);
    assert.ok(existsSync(keptPath), "the kept branch's checkout stays");
    const listed = await ok({ op: 'branches', db: 'app' });
    assert.deepEqual(
      listed.branches?.map((b) => b.branch).sort(),
      ['kept', 'main'],
      'the restarted daemon lists only what the store has',
    );
  });
});
