// No single request takes the daemon down, or any session with it: an answer too large for one response line is a
// TOO_LARGE error naming the narrower request, a client that hangs up mid-answer or never reads its answers is
// dropped alone, and every closed session gives back every descriptor it held on its checkout.
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  assertDaemonError,
  LineClient,
  makeStoreDir,
  startDaemon,
  type DaemonProcess,
  type StoreDir,
} from './daemon-process.js';
import { runSql } from '../ops/sqlite-cli.js';

/** Descriptors the process holds on files under dir (read from /proc). */
function descriptorsUnder(pid: number, dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // Closed between the listing and the read.
    }
  }
  return out;
}

describe('a request that cannot crash the daemon', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  let session: string;

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    assert.equal(s.cli(['fork', 'app', 'big']).code, 0);
    const co = s.cli(['checkout', 'app@big']).stdout.trim();
    // 40 rows of 1 MiB: as JSON (hex) about 80 MiB of rows, past what one response line may carry (64 MiB).
    runSql(
      co,
      'CREATE TABLE blobs(id INTEGER PRIMARY KEY, b BLOB); CREATE TABLE small(id INTEGER PRIMARY KEY, v TEXT);' +
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) INSERT INTO blobs SELECT x, randomblob(1048576) FROM c;' +
        "INSERT INTO small VALUES (1, 'one');",
    );
    assert.equal(s.cli(['checkpoint', 'app@big', 'filled']).code, 0);
    assert.equal(s.cli(['fork', 'app', 'live']).code, 0);
    d = await startDaemon(s, ['-flush-every', '0']);
    const open = await d.request({ op: 'open', db: 'app', branch: 'live' });
    assert.equal(open.ok, true, JSON.stringify(open));
    session = open.checkout ?? '';
    runSql(session, 'CREATE TABLE kept(v); INSERT INTO kept VALUES (1);');
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('a diff past one response line is TOO_LARGE, naming limit, summary and table; they answer, and sessions live on', async () => {
    const big = await d.request({ op: 'diff', db: 'app', branch: 'main', to: 'app@big' });
    assertDaemonError(big, 'TOO_LARGE', /MiB/);
    assert.match(big.hint ?? '', /"summary": true/);
    assert.match(big.hint ?? '', /"table"/);
    assert.match(big.hint ?? '', /"limit"/);
    assert.doesNotMatch(big.hint ?? '', /--/, 'wire terms, not CLI flags');
    const limited = await d.request({ op: 'diff', db: 'app', branch: 'main', to: 'app@big', limit: 5 });
    assert.equal(limited.ok, true, JSON.stringify(limited).slice(0, 300));
    const blobs = (limited.result as { tables: Array<{ table: string; added: unknown[]; counts?: unknown }> })
      .tables[0];
    assert.deepEqual(
      [blobs?.table, blobs?.added.length, blobs?.counts],
      ['blobs', 5, { added: 40, removed: 0, changed: 0 }],
    );
    const summary = await d.request({ op: 'diff', db: 'app', branch: 'main', to: 'app@big', summary: true });
    assert.equal(summary.ok, true, JSON.stringify(summary).slice(0, 300));
    const tables = (summary.result as { tables: Array<{ table: string; status: string }> }).tables;
    assert.deepEqual(
      tables.map((t) => [t.table, t.status]),
      [
        ['blobs', 'added'],
        ['small', 'added'],
      ],
    );
    const one = await d.request({ op: 'diff', db: 'app', branch: 'main', to: 'app@big', table: 'small' });
    assert.equal(one.ok, true, JSON.stringify(one).slice(0, 300));
    const only = (one.result as { tables: Array<{ table: string; added: unknown[] }> }).tables;
    assert.deepEqual(
      only.map((t) => [t.table, t.added.length]),
      [['small', 1]],
    );
    assertDaemonError(
      await d.request({ op: 'diff', db: 'app', branch: 'main', to: 'app@big', table: 'nope' }),
      'NOT_FOUND',
      /no table "nope"/,
    );
    const flushed = await d.request({ op: 'flush', db: 'app', branch: 'live' });
    assert.equal(flushed.ok, true, JSON.stringify(flushed));
  });

  test('the CLI diff names the narrower requests too, and --table narrows it', () => {
    const one = s.cli(['diff', 'app', 'app@big', '--table', 'small', '--json']);
    assert.equal(one.code, 0, one.stderr);
    const doc = JSON.parse(one.stdout) as { tables: Array<{ table: string }> };
    assert.deepEqual(
      doc.tables.map((t) => t.table),
      ['small'],
    );
  });

  test('a client that hangs up mid-answer, or pipelines without reading, is dropped alone', async () => {
    for (let i = 0; i < 3; i++) {
      const c = await LineClient.connect(d.sock);
      c.send(`${JSON.stringify({ op: 'diff', db: 'app', branch: 'main', to: 'app@big', table: 'blobs' })}\n`);
      c.close();
    }
    const greedy = await LineClient.connect(d.sock);
    greedy.socket.pause();
    greedy.send(`${JSON.stringify({ op: 'branches', db: 'app' })}\n`.repeat(5000));
    const status = await d.request({ op: 'status' });
    assert.equal(status.ok, true);
    assert.equal(status.sessions?.length, 1);
    greedy.close();
    const flushed = await d.request({ op: 'flush', db: 'app', branch: 'live' });
    assert.equal(flushed.ok, true, JSON.stringify(flushed));
  });
});

// One kept connection on a closed checkout, and only that: its SQLite descriptors on the main file, -wal and -shm;
// capture's raw reads' on the main file and -shm; and the main file's of capture's other connection, closed (its
// -wal with it) but its descriptor held by SQLite until the file's last connection closes, as closing it would drop
// the kept one's locks. A second connection left open would hold a second -wal.
const ONE_KEPT_CONNECTION = ['.db', '.db', '.db', '.db-shm', '.db-shm', '.db-wal'];

// One kept connection's descriptors, and at most two on the file whose close waits for it: a fresh fork's checkout
// copied (no reflink) is pinned by a connection of its own until the copy is on the disk, and fsynced through a raw
// descriptor meanwhile; SQLite defers closing the pin's descriptor, and raw-file the fsync's, until the process's last
// connection on the file closes (the next open below proves they go with the kept connection).
function assertOneKept(held: string[], what: string): void {
  const files = held.filter((f) => f === '.db').length;
  assert.deepEqual(
    held.filter((f) => f !== '.db'),
    ONE_KEPT_CONNECTION.filter((f) => f !== '.db'),
    what,
  );
  assert.ok(files >= 3 && files <= 5, `${what}: ${JSON.stringify(held)}`);
}

// The descriptors the process holds on the checkout at path and its -wal and -shm, by suffix.
function heldOn(pid: number, path: string): string[] {
  return descriptorsUnder(pid, path)
    .map((f) => f.slice(f.lastIndexOf('.')))
    .sort();
}

describe("a closed session's descriptors", () => {
  let s: StoreDir;

  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
  });

  after(() => s.cleanup());

  test('a closed session gives back every descriptor it held on its checkout, but one kept connection the next open takes back', async () => {
    // With -max-open 1, the one place is the kept connection's while no session holds it: each open closes the
    // connection kept since the last close first (docs/architecture.md, "One connection per checkout").
    const d = await startDaemon(s, ['-flush-every', '0', '-max-open', '1']);
    try {
      const pid = d.proc.pid ?? 0;
      const checkouts = `${s.store}/checkouts/`;
      let previous: string | undefined;
      for (let i = 0; i < 5; i++) {
        assert.equal(s.cli(['fork', 'app', `cycle-${i}`]).code, 0);
        const open = await d.request({ op: 'open', db: 'app', branch: `cycle-${i}` });
        assert.equal(open.ok, true, JSON.stringify(open));
        const path = `${checkouts}app/cycle-${i}.db`;
        assert.ok(heldOn(pid, path).length > 0, 'an open session holds its checkout');
        if (previous !== undefined) assert.deepEqual(heldOn(pid, previous), [], 'the open closed the kept connection');
        runSql(path, `CREATE TABLE t(v); INSERT INTO t VALUES (${i});`);
        const closed = await d.request({ op: 'close', db: 'app', branch: `cycle-${i}` });
        assert.equal(closed.ok, true, JSON.stringify(closed));
        assertOneKept(heldOn(pid, path), 'and gives back all but one kept connection');
        previous = path;
      }
      const again = await d.request({ op: 'open', db: 'app', branch: 'cycle-0' });
      assert.equal(again.ok, true, JSON.stringify(again));
      assert.deepEqual(heldOn(pid, previous ?? ''), [], 'the last kept connection closed too');
      assert.equal((await d.request({ op: 'close', db: 'app', branch: 'cycle-0' })).ok, true);
    } finally {
      await d.stop();
    }
  });
});

describe('open/close cycles under a small file limit', () => {
  let s: StoreDir;

  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
  });

  after(() => s.cleanup());

  test('60 open/close cycles under `ulimit -n 64` all flush and close, and leave no descriptor behind', async () => {
    const d = await startDaemon(s, ['-flush-every', '0'], {}, s.file('d.sock'), ['prlimit', '--nofile=64:64', '--']);
    try {
      for (let i = 0; i < 60; i++) {
        const open = await d.request({ op: 'open', db: 'app', branch: 'main' });
        assert.equal(open.ok, true, `cycle ${i}: ${JSON.stringify(open)}`);
        runSql(open.checkout ?? '', `CREATE TABLE IF NOT EXISTS t(i); INSERT INTO t VALUES (${i});`);
        const closed = await d.request({ op: 'close', db: 'app', branch: 'main' });
        assert.equal(closed.ok, true, `cycle ${i}: ${JSON.stringify(closed)}`);
      }
      assert.deepEqual(descriptorsUnder(d.proc.pid ?? 0, `${s.store}/checkouts/`), []);
    } finally {
      await d.stop();
    }
    const count = s.cli(['diff', 'app@main@init', 'app', '--summary', '--json']);
    assert.equal(count.code, 0, count.stderr);
    const t = (JSON.parse(count.stdout) as { tables: Array<{ table: string; right_count?: number }> }).tables;
    assert.deepEqual(
      t.map((x) => [x.table, x.right_count]),
      [['t', 60]],
    );
  });
});
