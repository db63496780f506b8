// The `check` op: every refusal rollback, promote or destroy would meet for who asks, and nothing changed; a refusal
// the human may lift says so (human_can_allow), as the verb itself would. Beside it, the additive results fork,
// checkout and rollback answer, which an SDK needs to report what the MCP tools report.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { refsSnapshot } from '../mcp/mcp-harness.js';
import { runSql } from '../ops/sqlite-cli.js';
import { assertDaemonError, makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

describe('the daemon: check, and what fork, checkout and rollback report', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  /** Every ref with its bytes, to prove a check wrote nothing. */
  const refs = () => refsSnapshot(s.store);
  before(async () => {
    s = makeStoreDir();
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    assert.deepEqual(await d.request({ op: 'create', db: 'app' }), { ok: true });
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'work' })).ok, true);
  });
  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test("an agent's check of a forced promote onto protected main is refused, liftable, and changes nothing", async () => {
    const before = refs();
    const ask = { op: 'check', verb: 'promote', db: 'app', branch: 'work', name: 'main', force: true } as const;
    const res = await d.request({ ...ask, actor: 'agent' });
    assertDaemonError(res, 'PROTECTED', /-allow-force/);
    assert.equal(res.human_can_allow, true);
    assert.deepEqual(await d.request({ ...ask, actor: 'agent', allow_force: true }), {
      ok: true,
      result: { verb: 'promote', allowed: true },
    });
    assert.deepEqual((await d.request(ask)).result, { verb: 'promote', allowed: true });
    const unforced = await d.request({ ...ask, force: false });
    assertDaemonError(unforced, 'PROTECTED', /takes force/);
    assert.equal(unforced.human_can_allow, undefined, 'a human without force lifts nothing by asking');
    assert.deepEqual(refs(), before, 'no check wrote a ref');
  });

  test('rollback and destroy checks: a fork goes ahead, the undo point of protected main is the human’s', async () => {
    assert.deepEqual(
      (await d.request({ op: 'check', verb: 'rollback', db: 'app', branch: 'work', name: 'fork', actor: 'agent' }))
        .result,
      {
        verb: 'rollback',
        allowed: true,
      },
    );
    const rolled = await d.request({ op: 'rollback', db: 'app', name: 'init' });
    assert.equal((rolled.result as { protected?: boolean }).protected, true, 'rollback says main is protected');
    const before = refs();
    const undo = { op: 'check', db: 'app', branch: 'main-pre-rollback', actor: 'agent' } as const;
    const destroy = await d.request({ ...undo, verb: 'destroy', force: true });
    assertDaemonError(destroy, 'PROTECTED', /undo point of protected app@main/);
    assert.equal(destroy.human_can_allow, true);
    const second = await d.request({ op: 'check', verb: 'rollback', db: 'app', name: 'init', actor: 'agent' });
    assertDaemonError(second, 'PROTECTED', /a second rollback would replace it/);
    assert.equal(second.human_can_allow, true);
    assertDaemonError(await d.request({ ...undo, verb: 'rollback', name: 'nope' }), 'NOT_FOUND');
    assertDaemonError(await d.request({ op: 'check', verb: 'fork', db: 'app', name: 'x' }), 'INVALID_ARGUMENT', /verb/);
    assert.deepEqual(refs(), before, 'no check wrote a ref');
  });

  test('a check of a promote whose source checkout holds writes decides that implicit checkpoint too', async () => {
    const file = (await d.request({ op: 'checkout', db: 'app', branch: 'main-pre-rollback' })).checkout as string;
    runSql(file, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
    const res = await d.request({
      op: 'check',
      verb: 'promote',
      db: 'app',
      branch: 'main-pre-rollback',
      name: 'work',
      actor: 'agent',
    });
    assertDaemonError(res, 'PROTECTED', /checkpointing the uncheckpointed writes of its checkout into/);
    assert.equal(res.human_can_allow, true);
  });

  test("a check runs a promote's if_head, and an agent's destroy of a checkout holding writes", async () => {
    assert.deepEqual(await d.request({ op: 'create', db: 'cas' }), { ok: true });
    const head = (await d.request({ op: 'fork', db: 'cas', branch: 'main', name: 'a' })).txid as number;
    const before = refs();
    const ask = { op: 'check', verb: 'promote', db: 'cas', branch: 'a', name: 'main', force: true } as const;
    assert.deepEqual((await d.request({ ...ask, if_head: head })).result, { verb: 'promote', allowed: true });
    assertDaemonError(
      await d.request({ ...ask, if_head: head + 1 }),
      'BASE_MOVED',
      new RegExp(`cas@main moved since txid ${head + 1}: its head is now txid ${head}`),
    );
    assertDaemonError(await d.request({ ...ask, if_head: -1 }), 'INVALID_ARGUMENT', /if_head must be a txid/);
    const file = (await d.request({ op: 'checkout', db: 'cas', branch: 'a' })).checkout as string;
    runSql(file, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
    const destroy = { op: 'check', verb: 'destroy', db: 'cas', branch: 'a', actor: 'agent' } as const;
    const refused = await d.request({ ...destroy, allow_force: true });
    assertDaemonError(refused, 'PROTECTED', /holds writes no checkpoint has in its checkout/);
    assert.deepEqual((await d.request({ ...destroy, allow_force: true, force: true })).result, {
      verb: 'destroy',
      allowed: true,
    });
    assert.deepEqual((await d.request({ op: 'check', verb: 'destroy', db: 'cas', branch: 'a' })).result, {
      verb: 'destroy',
      allowed: true,
    });
    assert.deepEqual(refs(), before, 'no check wrote a ref');
  });

  test('fork reports the TTL applied and the expiry; checkout reports what the file holds', async () => {
    const forked = await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'timed', ttl: '2h' });
    const r = forked.result as { ttl: string; expires_at: string };
    assert.equal(r.ttl, '2h0m0s');
    const listed = (await d.request({ op: 'branches', db: 'app' })).branches?.find((b) => b.branch === 'timed');
    assert.equal(r.expires_at, listed?.expires_at);
    assert.deepEqual((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'forever' })).result, {
      ttl: null,
      expires_at: null,
    });
    const out = await d.request({ op: 'checkout', db: 'app', branch: 'timed' });
    assert.deepEqual(out.result, { txid: forked.txid, reused: false, dirty: false });
  });
});
