// Who asks, over the daemon's socket: a request without `actor` is a human's; `actor: "agent"` gets the agent rules
// (force only with allow_force, no discarding, the undo points of protected branches left alone). A second
// checkout keeps uncheckpointed writes and warns; `discard` drops them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
