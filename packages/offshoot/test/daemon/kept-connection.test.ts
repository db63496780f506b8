// A daemon keeps a checkout's connection from a session's close through the diffs that read the checkout in place.
// Who may hold it, and when it must be gone: a foreign writer never waits on it nor has its write passed off as the
// head; destroy closes it before the file goes; a file another process replaced under it is never read through it;
// a kill -9 leaves a checkout the next daemon proves clean; a stopped daemon leaves no connection's files behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Response } from '../../src/protocol/wire.js';
import { query, runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

// Descriptors the daemon holds on a file at path (or on one that was there and is now deleted).
function daemonFds(d: DaemonProcess, path: string): string[] {
  const dir = `/proc/${d.proc.pid}/fd`;
  const out: string[] = [];
  for (const fd of readdirSync(dir)) {
    let target: string;
    try {
      target = readlinkSync(`${dir}/${fd}`);
    } catch {
      continue;
    }
    if (target === path || target === `${path} (deleted)`) out.push(target);
  }
  return out;
}

// What the stock sqlite3 CLI says when it tries to take the file at path alone, without waiting ('' when it did).
function takeAlone(path: string): string {
  const r = spawnSync('sqlite3', ['-bail', path], {
    input: 'PRAGMA busy_timeout=0;\nPRAGMA locking_mode=EXCLUSIVE; BEGIN IMMEDIATE; COMMIT;\n',
    encoding: 'utf8',
  });
  return r.status === 0 ? '' : r.stderr;
}

function added(res: Response): number {
  assert.equal(res.ok, true, res.error);
  const diff = res.result as { tables: Array<{ added: unknown[] }> };
  return diff.tables.reduce((n, t) => n + t.added.length, 0);
}

// Forks main at the seed, opens it, writes ten rows, closes it: the episode up to its diff. Returns the checkout.
async function episodeUpToDiff(d: DaemonProcess, name: string): Promise<string> {
  const fork = await d.request({ op: 'fork', db: 'app', branch: 'main', name, from: 'seeded' });
  assert.equal(fork.ok, true, fork.error);
  const open = await d.request({ op: 'open', db: 'app', branch: name });
  assert.equal(open.ok, true, open.error);
  const path = open.checkout ?? '';
  const values = Array.from({ length: 10 }, (_, i) => `('${name}-${i}')`).join(', ');
  runSql(path, `INSERT INTO t(v) VALUES ${values};`);
  const close = await d.request({ op: 'close', db: 'app', branch: name });
  assert.equal(close.ok, true, close.error);
  return path;
}

describe("a checkout's connection kept by the daemon", () => {
  let s: StoreDir;
  before(() => {
    s = makeStoreDir();
    const seed = s.file('seed.db');
    runSql(
      seed,
      "PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('seed');",
    );
    for (const args of [
      ['create', 'app', '--from', seed],
      ['checkout', 'app'],
      ['checkpoint', 'app', 'seeded'],
    ]) {
      const r = s.cli(args);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(() => s.cleanup());

  test('a foreign writer never waits on it nor passes for the head; destroy closes it before the file goes', async () => {
    const d = await startDaemon(s);
    try {
      const path = await episodeUpToDiff(d, 'w1');
      assert.equal(added(await d.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w1' })), 10);
      // The stock sqlite3 CLI commits while the daemon may hold the checkout's connection (its busy timeout is 0).
      runSql(path, "INSERT INTO t(v) VALUES ('foreign');");
      assert.equal(query(path, 'SELECT count(*) FROM t').trim(), '12');
      // The diff is of durable states: the foreign commit is the checkout's, not the head's.
      assert.equal(added(await d.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w1' })), 10);
      const destroyed = await d.request({ op: 'destroy', db: 'app', branch: 'w1', force: true });
      assert.equal(destroyed.ok, true, destroyed.error);
      assert.equal(existsSync(path), false);
      assert.deepEqual(daemonFds(d, path), [], 'the daemon holds nothing on the destroyed checkout');
    } finally {
      await d.stop();
    }
  });

  test("a diff reading a checkout in place beside its live session leaves the session's connections their locks", async () => {
    const d = await startDaemon(s);
    try {
      await episodeUpToDiff(d, 'w5');
      const open = await d.request({ op: 'open', db: 'app', branch: 'main' });
      assert.equal(open.ok, true, open.error);
      const main = open.checkout ?? '';
      // Capture's connections hold the checkout's shared lock: no foreign connection may take the file alone.
      assert.match(takeAlone(main), /database is locked/);
      for (let i = 0; i < 3; i++)
        assert.equal(
          added(await d.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w5' })),
          10,
        );
      assert.match(takeAlone(main), /database is locked/, "the diff's descriptors dropped the session's locks");
      const close = await d.request({ op: 'close', db: 'app', branch: 'main' });
      assert.equal(close.ok, true, close.error);
    } finally {
      await d.stop();
    }
  });

  test('a checkout another process replaced under it is read anew, never through it', async () => {
    const d = await startDaemon(s);
    try {
      const path = await episodeUpToDiff(d, 'w2');
      assert.equal(added(await d.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w2' })), 10);
      // A foreign commit, then the CLI moves the checkout aside and puts the head back in its place.
      runSql(path, "INSERT INTO t(v) VALUES ('foreign');");
      const forced = s.cli(['checkout', 'app@w2', '--force']);
      assert.equal(forced.code, 0, forced.stderr);
      assert.equal(query(path, 'SELECT count(*) FROM t').trim(), '11');
      // The re-materialized checkout is clean at the head: the diff reads it in place, as it is now.
      assert.equal(added(await d.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w2' })), 10);
      const aside = readdirSync(s.dir, { recursive: true })
        .map(String)
        .filter((f) => /w2.*aside|aside.*w2/.test(f));
      for (const f of aside) assert.deepEqual(daemonFds(d, `${s.dir}/${f}`), [], `nothing kept on ${f}`);
    } finally {
      await d.stop();
    }
  });

  test('a rollback closes it before the checkout is replaced: nothing is left open on the file it replaced', async () => {
    const d = await startDaemon(s);
    try {
      const path = await episodeUpToDiff(d, 'w4');
      const cp = await d.request({ op: 'checkpoint', db: 'app', branch: 'w4', name: 'ten' });
      assert.equal(cp.ok, true, cp.error);
      const open = await d.request({ op: 'open', db: 'app', branch: 'w4' });
      assert.equal(open.ok, true, open.error);
      runSql(path, "INSERT INTO t(v) VALUES ('eleventh');");
      assert.equal((await d.request({ op: 'close', db: 'app', branch: 'w4' })).ok, true);
      assert.equal(added(await d.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w4' })), 11);
      const rolled = await d.request({ op: 'rollback', db: 'app', branch: 'w4', name: 'ten' });
      assert.equal(rolled.ok, true, rolled.error);
      assert.deepEqual(
        daemonFds(d, path).filter((f) => f.endsWith('(deleted)')),
        [],
        'no connection left on the replaced file',
      );
      assert.equal(added(await d.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w4' })), 10);
    } finally {
      await d.stop();
    }
  });

  test('a kill -9 leaves a checkout the next daemon proves clean, and a stopped daemon leaves no -wal', async () => {
    const d1 = await startDaemon(s);
    let path: string;
    try {
      path = await episodeUpToDiff(d1, 'w3');
      assert.equal(
        added(await d1.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w3' })),
        10,
      );
    } finally {
      d1.proc.kill('SIGKILL');
      await d1.exited;
    }
    const d2 = await startDaemon(s);
    try {
      const open = await d2.request({ op: 'open', db: 'app', branch: 'w3' });
      assert.equal(open.ok, true, open.error);
      assert.equal(open.warnings, undefined, 'nothing to keep aside: the checkout is the head');
      assert.equal(query(path, 'SELECT count(*) FROM t').trim(), '11');
      assert.equal((await d2.request({ op: 'close', db: 'app', branch: 'w3' })).ok, true);
      assert.equal(
        added(await d2.request({ op: 'diff', db: 'app', branch: 'main', name: 'seeded', to: 'app@w3' })),
        10,
      );
    } finally {
      await d2.stop();
    }
    // The kept connections closed with the daemon, the last of each checkout's: SQLite removed their -wal.
    assert.equal(existsSync(`${path}-wal`), false);
    assert.deepEqual(
      readdirSync(s.dir, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('main.db-wal')),
      [],
    );
  });
});
