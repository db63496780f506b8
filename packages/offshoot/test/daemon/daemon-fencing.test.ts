import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EventEnvelope } from '../../src/protocol/wire.js';
import { runSql } from '../ops/sqlite-cli.js';
import {
  assertDaemonError,
  LineClient,
  makeStoreDir,
  sleep,
  startDaemon,
  until,
  type DaemonProcess,
  type StoreDir,
} from './daemon-process.js';

// A short lease (renewed every 500 ms) so that pausing the daemon for a few seconds lets it lapse.
const LEASE_MS = 1500;

describe('fencing a daemon session', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    d = await startDaemon(s, ['-flush-every', '200ms', '-reap-every', '0'], {
      OFFSHOOT_LEASE_TTL_MS: String(LEASE_MS),
    });
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('a lease taken while the daemon is paused fences its session: flushes fail FENCED, status shows the error until close', async () => {
    const opened = await d.request({ op: 'open', db: 'app' });
    assert.equal(opened.ok, true, JSON.stringify(opened));
    const checkout = opened.checkout ?? '';
    runSql(checkout, "CREATE TABLE t(x); INSERT INTO t VALUES ('before the pause');");
    const good = await d.request({ op: 'flush', db: 'app', name: 'before' });
    assert.equal(good.ok, true, JSON.stringify(good));
    const sub = await LineClient.connect(d.sock);
    assert.deepEqual(await sub.request({ op: 'subscribe' }), { ok: true });

    let outsider = '';
    d.proc.kill('SIGSTOP');
    try {
      await sleep(LEASE_MS + 1000);
      const taken = s.cli(['lease', 'acquire', 'app']);
      assert.equal(taken.code, 0, taken.stderr);
      outsider = /^acquired app@main as (\S+) \(epoch \d+\)/.exec(taken.stdout)?.[1] ?? '';
      assert.notEqual(outsider, '', taken.stdout);
    } finally {
      d.proc.kill('SIGCONT');
    }

    const fenced = (await sub.eventsUntil((e) => e.type === 'fenced')).pop() as EventEnvelope;
    assert.equal(fenced.db, 'app');
    assert.match(String(fenced.detail?.cause), /fenced|lost its lease/);
    sub.close();

    runSql(checkout, "INSERT INTO t VALUES ('after the pause');");
    const refused = await d.request({ op: 'flush', db: 'app' });
    assertDaemonError(refused, 'FENCED');
    const st = await d.request({ op: 'status' });
    assert.equal(st.sessions?.length, 1, 'a fenced session stays listed');
    assert.match(st.sessions?.[0]?.error ?? '', /fenced|lost its lease/);
    assert.equal(st.sessions?.[0]?.durable_txid, good.txid, 'nothing more became durable');
    const br = await d.request({ op: 'branches', db: 'app' });
    assert.equal(br.branches?.[0]?.state, 'error');
    assert.equal(br.branches?.[0]?.head_txid, good.txid, 'the background flusher leaves a fenced session alone');
    const line = s.cli(['session', 'status', '-socket', d.sock]).stdout;
    assert.match(line, / ERROR="/);

    assert.deepEqual(await d.request({ op: 'close', db: 'app' }), { ok: true });
    assert.deepEqual(await d.request({ op: 'status' }), { ok: true, sessions: [] });
    await until(() => d.stderr().includes('app@main: session_closed'), 'the close to be logged');
    const leases = s.cli(['lease', 'list']).stdout;
    assert.ok(
      leases.includes(`app@main held by ${outsider} `),
      `closing a fenced session leaves the new holder's lease alone: ${leases}`,
    );
  });
});
