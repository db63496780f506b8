// Scale of one daemon: 200 sessions each writing, every write durable after its flush, under a budget of 64 open
// checkouts; and 1,000 sessions on a daemon whose file limit is 256, where the default -max-open keeps it within its
// descriptors.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { defaultMaxOpen } from '../../src/daemon/daemon-options.js';
import { runSql } from '../ops/sqlite-cli.js';
import { LineClient, makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

function descriptorCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

async function ok(d: DaemonProcess, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await d.request(req);
  assert.equal(res.ok, true, `${JSON.stringify(req)}: ${JSON.stringify(res)}`);
  return res as unknown as Record<string, unknown>;
}

describe('200 sessions on one daemon, each writing', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    d = await startDaemon(s, ['-flush-every', '0', '-max-open', '64']);
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('every write is durable after its flush', async () => {
    const n = 200;
    const names = Array.from({ length: n }, (_, i) => `w${i}`);
    for (const b of names) await ok(d, { op: 'fork', db: 'app', branch: 'main', name: b });
    const lanes = 8;
    const checkouts = new Map<string, string>();
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        const c = await LineClient.connect(d.sock);
        try {
          for (let i = lane; i < n; i += lanes) {
            const b = names[i] ?? '';
            const o = await c.request({ op: 'open', db: 'app', branch: b });
            assert.equal(o.ok, true, JSON.stringify(o));
            checkouts.set(b, o.checkout ?? '');
          }
          for (let i = lane; i < n; i += lanes) {
            const b = names[i] ?? '';
            // A writer of the test's own, as an agent's would be: open, write, close.
            const db = openDatabase(checkouts.get(b) ?? '');
            db.exec(`CREATE TABLE w(v TEXT); INSERT INTO w VALUES ('${b}');`);
            db.close();
            const f = await c.request({ op: 'flush', db: 'app', branch: b, name: 'written' });
            assert.equal(f.ok, true, JSON.stringify(f));
          }
        } finally {
          c.close();
        }
      }),
    );
    const st = await d.request({ op: 'status' });
    assert.equal(st.sessions?.length, n);
    assert.ok((st.sessions ?? []).filter((x) => x.evicted).length >= n - 64);
    for (const b of names) {
      const diff = await ok(d, { op: 'diff', db: 'app', branch: 'main', to: `app@${b}@written`, summary: true });
      const tables = (diff.result as { tables: Array<{ table: string; status: string; right_count?: number }> }).tables;
      assert.deepEqual(
        tables.map((t) => [t.table, t.status, t.right_count]),
        [['w', 'added', 1]],
        b,
      );
    }
  });
});

describe('1,000 sessions on a daemon whose file limit is 256', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    d = await startDaemon(s, ['-flush-every', '0'], {}, s.file('d.sock'), ['prlimit', '--nofile=256:256', '--']);
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('all open, the default -max-open keeps the daemon within its descriptors, and writes still arrive', async () => {
    const n = 1000;
    const lanes = 4;
    const checkouts: string[] = [];
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        const c = await LineClient.connect(d.sock);
        try {
          for (let i = lane; i < n; i += lanes) {
            const f = await c.request({ op: 'fork', db: 'app', branch: 'main', name: `s${i}` });
            assert.equal(f.ok, true, JSON.stringify(f));
            const o = await c.request({ op: 'open', db: 'app', branch: `s${i}` });
            assert.equal(o.ok, true, `session ${i}: ${JSON.stringify(o)}`);
            checkouts[i] = o.checkout ?? '';
          }
        } finally {
          c.close();
        }
      }),
    );
    const pid = d.proc.pid ?? 0;
    assert.ok(descriptorCount(pid) < 256);
    const st = await d.request({ op: 'status' });
    assert.equal(st.sessions?.length, n);
    const evicted = (st.sessions ?? []).filter((x) => x.evicted).length;
    assert.ok(evicted >= n - defaultMaxOpen(256), `${evicted} evicted`);
    for (const i of [0, 1, 499, 998, 999]) {
      runSql(checkouts[i] ?? '', `CREATE TABLE t(v); INSERT INTO t VALUES (${i});`);
      await ok(d, { op: 'flush', db: 'app', branch: `s${i}`, name: 'written' });
      const diff = await ok(d, { op: 'diff', db: 'app', branch: 'main', to: `app@s${i}@written`, summary: true });
      const t = (diff.result as { tables: Array<{ table: string; right_count?: number }> }).tables;
      assert.deepEqual(
        t.map((x) => [x.table, x.right_count]),
        [['t', 1]],
      );
    }
    assert.ok(descriptorCount(pid) < 256);
  });
});
