// The bounded daemon (serve -max-open): past its budget the coldest idle session is evicted — lease kept and live,
// no descriptor left on its checkout — and reconnects on its next write or request without losing a transaction,
// even when a foreign writer commits to the evicted checkout; a checkout taken out of WAL mode meanwhile is noticed
// at once (event, metric, typed error). Scale is in session-scale.test.ts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { EventEnvelope } from '../../src/protocol/wire.js';
import { query, runSql } from '../ops/sqlite-cli.js';
import {
  assertDaemonError,
  LineClient,
  makeStoreDir,
  startDaemon,
  until,
  type DaemonProcess,
  type StoreDir,
} from './daemon-process.js';

const TOKEN = 'checkout-budget-test-token-0123456789';

/** The checkouts the process holds descriptors on (read from /proc). */
function openCheckouts(pid: number, root: string): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith(root)) out.add(target.replace(/-(wal|shm)$/, ''));
    } catch {
      // Closed between the listing and the read.
    }
  }
  return out;
}

function refOf(
  s: StoreDir,
  db: string,
  branch: string,
): { lease_holder?: string; lease_expiry?: string; epoch: number } {
  return JSON.parse(readFileSync(path.join(s.store, 'refs', db, branch), 'utf8')) as {
    lease_holder?: string;
    lease_expiry?: string;
    epoch: number;
  };
}

async function ok(d: DaemonProcess, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await d.request(req);
  assert.equal(res.ok, true, `${JSON.stringify(req)}: ${JSON.stringify(res)}`);
  return res as unknown as Record<string, unknown>;
}

async function evictedOf(d: DaemonProcess): Promise<string[]> {
  const st = await d.request({ op: 'status' });
  return (st.sessions ?? []).filter((x) => x.evicted === true).map((x) => x.branch);
}

describe('eviction under -max-open 2', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  let root: string;

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    d = await startDaemon(s, ['-flush-every', '0', '-max-open', '2', '-http', '127.0.0.1:0'], {
      OFFSHOOT_TOKEN: TOKEN,
      OFFSHOOT_LEASE_TTL_MS: '900',
    });
    await until(() => /listening on /.test(d.stderr()), 'the http listener');
    root = path.join(s.store, 'checkouts');
    for (let i = 0; i < 5; i++) await ok(d, { op: 'fork', db: 'app', branch: 'main', name: `b${i}` });
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('a foreign sqlite3 writer keeps committing to an evicted checkout, and every transaction arrives', async () => {
    const sub = await LineClient.connect(d.sock);
    assert.deepEqual(await sub.request({ op: 'subscribe' }), { ok: true });
    const checkout: Record<string, string> = {};
    for (let i = 0; i < 5; i++) {
      const o = await ok(d, { op: 'open', db: 'app', branch: `b${i}` });
      checkout[`b${i}`] = String(o.checkout);
      assert.ok(openCheckouts(d.proc.pid ?? 0, root).size <= 2, 'never more than -max-open checkouts held');
    }
    assert.deepEqual((await evictedOf(d)).sort(), ['b0', 'b1', 'b2']);
    const b0 = checkout.b0 ?? '';
    runSql(b0, 'CREATE TABLE t(n INTEGER PRIMARY KEY, body TEXT);');
    // The write itself reconnects the evicted session (its checkout is watched), evicting the coldest other one.
    await sub.eventsUntil((e) => e.type === 'session_reconnected' && e.branch === 'b0');
    let expected = 0;
    for (let round = 0; round < 6; round++) {
      for (let k = 0; k < 5; k++) runSql(b0, `INSERT INTO t(body) VALUES ('round ${round} txn ${k}');`);
      expected += 5;
      // Captured and flushed first: however late a loaded daemon notices the writes, b0 is idle from here on (a
      // session with work running is never evicted) and less recently active than the two that follow.
      await ok(d, { op: 'flush', db: 'app', branch: 'b0' });
      // Two other sessions get busy: b0 becomes the coldest and is evicted, while the writer goes on.
      for (const other of round % 2 === 0 ? ['b3', 'b4'] : ['b1', 'b2']) {
        runSql(checkout[other] ?? '', `CREATE TABLE IF NOT EXISTS o(x); INSERT INTO o VALUES (${round});`);
        await ok(d, { op: 'flush', db: 'app', branch: other });
      }
      assert.ok((await evictedOf(d)).includes('b0'), `round ${round}: b0 evicted`);
      for (let k = 0; k < 5; k++) runSql(b0, `INSERT INTO t(body) VALUES ('round ${round} evicted ${k}');`);
      expected += 5;
      const flushed = await ok(d, { op: 'flush', db: 'app', branch: 'b0' });
      assert.ok(Number(flushed.txid) > 0);
      assert.ok(openCheckouts(d.proc.pid ?? 0, root).size <= 2);
    }
    sub.close();
    for (let i = 0; i < 5; i++) await ok(d, { op: 'close', db: 'app', branch: `b${i}` });
    const out = s.file('b0-export.db');
    await ok(d, { op: 'export', db: 'app', branch: 'b0', path: out });
    assert.equal(query(out, 'SELECT count(*) FROM t;').trim(), String(expected));
    assert.equal(query(out, "SELECT count(*) FROM t WHERE body LIKE 'round 5 evicted %';").trim(), '5');
    // A closed session's checkout keeps one connection for its next reader (a diff) until it has gone unused a while
    // (docs/architecture.md, "One connection per checkout"): then nothing is left.
    await until(() => openCheckouts(d.proc.pid ?? 0, root).size === 0, 'the connections kept since the closes to go');
  });

  test("an evicted session's lease is renewed, never dropped", async () => {
    await ok(d, { op: 'open', db: 'app', branch: 'b0' });
    await ok(d, { op: 'open', db: 'app', branch: 'b1' });
    await ok(d, { op: 'open', db: 'app', branch: 'b2' });
    assert.ok((await evictedOf(d)).includes('b0'));
    const before = refOf(s, 'app', 'b0');
    const since = Date.now();
    // Three lengths of the daemon's liveness object later (900 ms each, which the lease stands on), the lease is
    // still ours, at the same epoch.
    await until(() => Date.now() > since + 3 * 900, 'three liveness lengths to pass');
    const now = refOf(s, 'app', 'b0');
    assert.equal(now.lease_holder, before.lease_holder);
    assert.equal(now.epoch, before.epoch);
    assert.ok(Date.parse(now.lease_expiry ?? '') > Date.now(), 'the lease is live');
    const at = s.cli(['checkpoint', 'app@b0', 'outsider']);
    assert.equal(at.code, 6, at.stderr);
    assert.match(at.stderr, /LEASE_HELD|leased|lease/i);
    assert.ok((await evictedOf(d)).includes('b0'));
    await ok(d, { op: 'flush', db: 'app', branch: 'b0', name: 'still-ours' });
    for (const b of ['b0', 'b1', 'b2']) await ok(d, { op: 'close', db: 'app', branch: b });
  });

  test('a checkout taken out of WAL mode while evicted: event, metric, typed error, nothing captured lost', async () => {
    // Whichever the watch sees first: the header's switch to rollback mode, or the journal of the write after it.
    const metric = async (): Promise<number> => {
      const url = `http://${/listening on (\S+)/.exec(d.stderr())?.[1]}/metrics`;
      const text = await (await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
      const n = [...text.matchAll(/^offshoot_contract_breaches_total\{kind="\w+"\} (\S+)$/gm)];
      assert.equal(n.length, 2, 'both kinds are exported');
      return n.reduce((sum, m) => sum + Number(m[1]), 0);
    };
    assert.equal(await metric(), 0);
    const o = await ok(d, { op: 'open', db: 'app', branch: 'b3' });
    const b3 = String(o.checkout);
    runSql(b3, "CREATE TABLE IF NOT EXISTS kept(v); INSERT INTO kept VALUES ('captured');");
    // Captured before the next opens, so b3 is the least recently active when they need its place.
    await until(async () => {
      const st = await d.request({ op: 'status' });
      return st.sessions?.find((x) => x.branch === 'b3')?.capture_lag_bytes === 0;
    }, "b3's write captured");
    await ok(d, { op: 'open', db: 'app', branch: 'b1' });
    await ok(d, { op: 'open', db: 'app', branch: 'b2' });
    assert.ok((await evictedOf(d)).includes('b3'));
    const sub = await LineClient.connect(d.sock);
    assert.deepEqual(await sub.request({ op: 'subscribe' }), { ok: true });
    runSql(b3, "PRAGMA journal_mode = DELETE; INSERT INTO kept VALUES ('behind our back');");
    const broken = (await sub.eventsUntil((e) => e.type === 'contract_broken')).pop() as EventEnvelope;
    sub.close();
    assert.equal(broken.branch, 'b3');
    assert.ok(['journal_mode', 'rollback_journal'].includes(String(broken.detail?.kind)), String(broken.detail?.kind));
    assert.equal(await metric(), 1);
    const refused = await d.request({ op: 'flush', db: 'app', branch: 'b3' });
    assertDaemonError(refused, 'UNSUPPORTED', /left WAL mode/);
    assert.match(refused.hint ?? '', /journal_mode/);
    const st = await d.request({ op: 'status' });
    assert.match(st.sessions?.find((x) => x.branch === 'b3')?.error ?? '', /left WAL mode/);
    await ok(d, { op: 'close', db: 'app', branch: 'b3' });
    const listed = s.cli(['status']);
    assert.match(listed.stdout, /app@b3 state=dirty/, 'the checkout reads dirty: it holds what was not captured');
    const out = s.file('b3-export.db');
    await ok(d, { op: 'export', db: 'app', branch: 'b3', path: out });
    assert.equal(query(out, 'SELECT group_concat(v) FROM kept;').trim(), 'captured', 'what was captured is durable');
    for (const b of ['b1', 'b2']) await ok(d, { op: 'close', db: 'app', branch: b });
  });
});
