// Every op answers the same over the unix socket and over HTTP: both transports share one dispatch.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Response } from '../../src/protocol/wire.js';
import { makeStoreDir, request, startDaemon, until, type DaemonProcess, type StoreDir } from './daemon-process.js';
import { runSql } from '../ops/sqlite-cli.js';

const TOKEN = 'parity-token-0123456789abcdef';
// Fields that name the moment rather than the state: they may differ between two otherwise identical runs.
const VOLATILE = new Set([
  'touched_at',
  'created_at',
  'last_flush_at',
  'durable_age',
  'ttl_remaining',
  'expires_at',
  'capture_lag_bytes',
]);

function normalize(value: unknown, db: string): unknown {
  if (typeof value === 'string') return value.split(db).join('DB');
  if (Array.isArray(value)) return value.map((v) => normalize(v, db));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!VOLATILE.has(k)) out[k] = normalize(v, db);
    return out;
  }
  return value;
}

/** The same script of ops, with a foreign write in the middle, for one database. */
function script(db: string): Array<Record<string, unknown> | { write: string }> {
  return [
    { op: 'create', db },
    { op: 'create', db },
    { op: 'open', db },
    { op: 'open', db },
    { write: "CREATE TABLE t(x); INSERT INTO t VALUES ('one'), ('two');" },
    { op: 'flush', db, name: 'seeded', meta: { run: 'parity' } },
    { op: 'flush', db, name: 'seeded' },
    { op: 'status' },
    { op: 'fork', db, branch: 'main', name: 'attempt', ttl: '1h' },
    { op: 'fork', db, branch: 'main', name: 'attempt' },
    { op: 'touch', db, branch: 'attempt', ttl: '2h' },
    { op: 'protect', db, branch: 'attempt' },
    { op: 'destroy', db, branch: 'attempt' },
    { op: 'unprotect', db, branch: 'attempt' },
    { op: 'checkout-at', db, branch: 'main', name: 'seeded' },
    { op: 'rollback', db, name: 'seeded' },
    { op: 'close', db },
    { op: 'rollback', db, name: 'seeded' },
    { op: 'promote', db, branch: 'attempt', name: 'main' },
    { op: 'promote', db, branch: 'attempt', name: 'main', force: true },
    { op: 'compact', db },
    { op: 'branches', db },
    { op: 'diff', db, branch: 'main', to: `${db}@attempt`, summary: true },
    { op: 'destroy', db, branch: 'attempt', force: true },
    { op: 'no-such-op' },
  ];
}

describe('socket and HTTP parity', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  let addr = '';

  before(async () => {
    s = makeStoreDir();
    d = await startDaemon(s, ['-http', '127.0.0.1:0', '-flush-every', '0'], { OFFSHOOT_TOKEN: TOKEN });
    await until(() => /listening on /.test(d.stderr()), 'the http listener');
    addr = /listening on (\S+)/.exec(d.stderr())?.[1] ?? '';
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  async function viaHttp(body: unknown): Promise<Response> {
    const res = await fetch(`http://${addr}/rpc`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as Response;
  }

  async function run(db: string, send: (req: Record<string, unknown>) => Promise<Response>): Promise<unknown[]> {
    const answers: unknown[] = [];
    let checkout = '';
    for (const step of script(db)) {
      if ('write' in step) {
        runSql(checkout, String(step.write));
        continue;
      }
      const res = await send(step);
      if (step.op === 'open' && res.ok) checkout = res.checkout ?? '';
      answers.push(normalize(res, db));
    }
    return answers;
  }

  test('the same script gives the same answers over both transports', async () => {
    const overSocket = await run('viasock', (req) => request(d.sock, req));
    const overHttp = await run('viahttp', viaHttp);
    assert.equal(overSocket.length, overHttp.length);
    for (let i = 0; i < overSocket.length; i++)
      assert.deepEqual(
        overHttp[i],
        overSocket[i],
        `step ${i}: ${JSON.stringify(script('db').filter((x) => !('write' in x))[i])}`,
      );
    assert.ok(
      overSocket.some((a) => (a as Response).ok === false),
      'the script covers refusals too',
    );
    assert.ok(overSocket.filter((a) => (a as Response).ok === true).length >= 15, 'and successes');
    assert.ok(
      overSocket.some((a) => typeof (a as Response).txid === 'number' && ((a as Response).txid ?? 0) > 1),
      'flushes and forks report txids',
    );
    assert.ok(
      overSocket.some((a) => ((a as Response).branches?.length ?? 0) >= 2),
      'branches are listed in full',
    );
  });
});
