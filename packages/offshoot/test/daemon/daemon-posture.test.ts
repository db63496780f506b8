// Who asks, over the daemon's socket: a request without `actor` is a human's; `actor: "agent"` gets the agent rules
// (force only with allow_force, no discarding, the undo points of protected branches left alone). A second
// checkout keeps uncheckpointed writes and warns; `discard` drops them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { undoPointName } from '../../src/ops/helpers/branch/undo-point-names.js';
import { dump, runSql } from '../ops/sqlite-cli.js';
import { assertDaemonError, makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

describe('the daemon: checkout of a dirty checkout, and requests an agent makes', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  before(async () => {
    s = makeStoreDir();
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    assert.deepEqual(await d.request({ op: 'create', db: 'app' }), { ok: true });
  });
  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('checkout keeps uncheckpointed writes and warns; discard drops them; an agent cannot discard', async () => {
    const first = await d.request({ op: 'checkout', db: 'app' });
    const file = first.checkout as string;
    runSql(file, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('unsaved');");
    const again = await d.request({ op: 'checkout', db: 'app' });
    assert.equal(again.checkout, file);
    assert.match(String(again.warnings), /no checkpoint has recorded yet \(kept\)/);
    assert.match(dump(file), /'unsaved'/);
    assertDaemonError(
      await d.request({ op: 'checkout', db: 'app', discard: true, actor: 'agent' }),
      'PROTECTED',
      /left to the human/,
    );
    assert.match(dump(file), /'unsaved'/);
    const dropped = await d.request({ op: 'checkout', db: 'app', discard: true });
    assert.equal(dropped.warnings, undefined);
    assert.doesNotMatch(dump(file), /'unsaved'/);
  });

  test('an agent forces past protection only with allow_force', async () => {
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'work' })).ok, true);
    assertDaemonError(
      await d.request({ op: 'promote', db: 'app', branch: 'work', name: 'main', force: true, actor: 'agent' }),
      'PROTECTED',
      /-allow-force/,
    );
    assertDaemonError(
      await d.request({ op: 'touch', db: 'app', ttl: '1s', actor: 'agent' }),
      'PROTECTED',
      /cannot set or shorten its TTL/,
    );
    assertDaemonError(await d.request({ op: 'fork', db: 'app', name: 'main-pre-promote' }), 'INVALID_NAME');
    const forced = await d.request({
      op: 'promote',
      db: 'app',
      branch: 'work',
      name: 'main',
      force: true,
      actor: 'agent',
      allow_force: true,
    });
    assert.equal(forced.ok, true, JSON.stringify(forced));
  });

  test('one TTL grammar and one expiry rule: zero clears a TTL, and touch and branches report the same expiry', async () => {
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'timed', ttl: '1h' })).ok, true);
    const touched = await d.request({ op: 'touch', db: 'app', branch: 'timed', ttl: '2h' });
    const expiresAt = (touched.result as { expires_at?: string }).expires_at;
    assert.ok(expiresAt !== undefined, JSON.stringify(touched));
    const listed = (await d.request({ op: 'branches', db: 'app' })).branches ?? [];
    assert.equal(listed.find((b) => b.branch === 'timed')?.expires_at, expiresAt);
    assert.equal((await d.request({ op: 'touch', db: 'app', branch: 'timed', ttl: '0s' })).ok, true);
    const cleared = (await d.request({ op: 'branches', db: 'app' })).branches ?? [];
    assert.equal(cleared.find((b) => b.branch === 'timed')?.ttl, undefined);
    assertDaemonError(await d.request({ op: 'touch', db: 'app', branch: 'timed', ttl: '-1s' }), 'INVALID_ARGUMENT');
    assertDaemonError(await d.request({ op: 'fork', db: 'app', name: 'zero', ttl: '0s' }), 'INVALID_ARGUMENT');
  });

  test('the CLI promotes a source with a live session after flushing it through the daemon', async () => {
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'live-src' })).ok, true);
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'dest' })).ok, true);
    const opened = await d.request({ op: 'open', db: 'app', branch: 'live-src' });
    runSql(
      opened.checkout as string,
      "CREATE TABLE IF NOT EXISTS u(v TEXT); INSERT INTO u VALUES ('not-yet-flushed');",
    );
    const r = s.cli(['promote', 'app@live-src', '--onto', 'dest', '-socket', d.sock]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /flushed the live session on app@live-src/);
    const out = s.file('dest.db');
    assert.equal(s.cli(['export', 'app@dest', out]).code, 0);
    assert.match(dump(out), /'not-yet-flushed'/, 'the session was flushed before the promote read its head');
    assert.equal((await d.request({ op: 'close', db: 'app', branch: 'live-src' })).ok, true);
  });

  test('hints over the wire are written for an SDK caller: no CLI flags', async () => {
    const human = await d.request({ op: 'destroy', db: 'app', branch: 'main' });
    assertDaemonError(human, 'PROTECTED');
    assert.doesNotMatch(String(human.hint), /--[a-z]/, String(human.hint));
    const meta = await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'tagged', meta: { '': 'v' } });
    assertDaemonError(meta, 'INVALID_ARGUMENT');
    assert.doesNotMatch(String(meta.hint), /--meta/, String(meta.hint));
    const agent = await d.request({ op: 'destroy', db: 'app', branch: 'main', force: true, actor: 'agent' });
    assertDaemonError(agent, 'PROTECTED');
    assert.match(String(agent.hint), /allow_force/);
    assert.doesNotMatch(String(agent.hint), /-allow-force|offshoot mcp/, String(agent.hint));
  });

  test('an agent neither opens a session on the undo point of protected main nor flushes one there', async () => {
    assert.equal((await d.request({ op: 'rollback', db: 'app', branch: 'main', name: 'promote' })).ok, true);
    const undo = { db: 'app', branch: 'main-pre-rollback' };
    assertDaemonError(await d.request({ op: 'open', ...undo, actor: 'agent' }), 'PROTECTED', /undo point/);
    const opened = await d.request({ op: 'open', ...undo });
    assert.equal(opened.ok, true, JSON.stringify(opened));
    assertDaemonError(
      await d.request({ op: 'flush', ...undo, name: 'mine', actor: 'agent' }),
      'PROTECTED',
      /undo point/,
    );
    assert.equal((await d.request({ op: 'close', ...undo })).ok, true);
  });
});

describe('the daemon: no route past the posture for an agent', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  const undo = { db: 'app', branch: 'main-pre-rollback' };
  const agent = { actor: 'agent' } as const;

  /** Every branch's head, to prove a refusal wrote nothing. */
  async function heads(): Promise<string> {
    const listed = (await d.request({ op: 'branches', db: 'app' })).branches ?? [];
    return JSON.stringify(listed.map((b) => [b.branch, b.head_txid, b.checkpoints]));
  }

  before(async () => {
    s = makeStoreDir();
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    assert.deepEqual(await d.request({ op: 'create', db: 'app' }), { ok: true });
    const main = (await d.request({ op: 'checkout', db: 'app' })).checkout as string;
    runSql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('one');");
    assert.equal((await d.request({ op: 'checkpoint', db: 'app', name: 'one' })).ok, true);
    assert.equal((await d.request({ op: 'rollback', db: 'app', name: 'init' })).ok, true);
    assert.equal((await d.request({ op: 'fork', db: 'app', name: 'work' })).ok, true);
    // The human makes a writable checkout of main's undo point; the agent writes into it.
    const file = (await d.request({ op: 'checkout', ...undo })).checkout as string;
    runSql(file, "INSERT INTO t VALUES ('agent-chosen');");
  });
  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('fork, promote and compact of the undo point of protected main do not checkpoint its checkout', async () => {
    const before = await heads();
    const re = /undo point of protected app@main/;
    assertDaemonError(await d.request({ op: 'fork', ...undo, name: 'copy', ...agent }), 'PROTECTED', re);
    assertDaemonError(await d.request({ op: 'promote', ...undo, name: 'work', ...agent }), 'PROTECTED', re);
    assertDaemonError(await d.request({ op: 'compact', ...undo, ...agent }), 'PROTECTED', re);
    assert.equal(await heads(), before);
  });

  test('nor does the flush of a session open there when an agent forks it', async () => {
    const opened = await d.request({ op: 'open', ...undo });
    assert.equal(opened.ok, true, JSON.stringify(opened));
    runSql(opened.checkout as string, "INSERT INTO t VALUES ('agent-live');");
    const before = await heads();
    assertDaemonError(await d.request({ op: 'fork', ...undo, name: 'copy', ...agent }), 'PROTECTED', /undo point/);
    assertDaemonError(await d.request({ op: 'promote', ...undo, name: 'work', ...agent }), 'PROTECTED', /undo point/);
    assert.equal(await heads(), before);
    assert.equal((await d.request({ op: 'close', ...undo })).ok, true);
  });

  test('offshoot.* meta keys are refused from every request that sets meta', async () => {
    const before = await heads();
    const meta = { 'offshoot.safety': 'pre-rollback', 'offshoot.of': 'main' };
    for (const req of [
      { op: 'fork', db: 'app', name: 'fake', meta },
      { op: 'fork', db: 'app', names: ['fake-1', 'fake-2'], meta },
      { op: 'checkpoint', db: 'app', branch: 'work', name: 'tagged', meta },
    ]) {
      const r = await d.request(req);
      assertDaemonError(r, 'INVALID_ARGUMENT', /offshoot\./);
      assert.doesNotMatch(String(r.hint), /--meta/);
    }
    assert.equal(await heads(), before);
  });

  test('the shortened undo-point name of a long protected branch is reserved', async () => {
    const long = `b${'y'.repeat(125)}`;
    assert.equal((await d.request({ op: 'fork', db: 'app', name: long })).ok, true);
    assert.equal((await d.request({ op: 'protect', db: 'app', branch: long })).ok, true);
    const stem = undoPointName(long, 'pre-rollback').slice(0, -'-pre-rollback'.length);
    assertDaemonError(await d.request({ op: 'fork', db: 'app', name: stem, ...agent }), 'INVALID_NAME', /undo point/);
  });

  test('an empty branch name is invalid, never read as main', async () => {
    const before = await heads();
    for (const actor of [{}, agent]) {
      assertDaemonError(
        await d.request({ op: 'rollback', db: 'app', branch: '', name: 'init', ...actor }),
        'INVALID_NAME',
      );
      assertDaemonError(
        await d.request({ op: 'destroy', db: 'app', branch: '', force: true, ...actor }),
        'INVALID_NAME',
      );
    }
    assert.equal(await heads(), before);
    // An omitted branch is main, as it always was.
    assert.equal((await d.request({ op: 'touch', db: 'app' })).ok, true);
  });
});
