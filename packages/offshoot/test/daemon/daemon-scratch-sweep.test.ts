import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, sleep, startDaemon, type StoreDir } from './daemon-process.js';

describe('session scratch of a SIGKILLed daemon', () => {
  let s: StoreDir;
  let sessions: string;
  let tmp: string;

  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    sessions = path.join(s.store, '.scratch', 'sessions');
    // The daemons' TMPDIR, to show that session scratch no longer lands there.
    tmp = s.file('tmp');
    mkdirSync(tmp);
  });

  after(() => s.cleanup());

  const env = (): NodeJS.ProcessEnv => ({ TMPDIR: tmp, OFFSHOOT_LEASE_TTL_MS: '600' });

  test('lives under the store root, survives the kill, and is swept by the next serve', async () => {
    const d1 = await startDaemon(s, ['-flush-every', '0'], env());
    let scratch: string;
    try {
      const open = s.cli(['session', 'open', 'app', '-socket', d1.sock]);
      assert.equal(open.code, 0, open.stderr);
      runSql(open.stdout.trim(), 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
      const flushed = s.cli(['session', 'flush', 'app', '-socket', d1.sock]);
      assert.equal(flushed.code, 0, flushed.stderr);
      const names = readdirSync(sessions);
      assert.equal(names.length, 1, `one session, one scratch dir: ${names.join(', ')}`);
      assert.match(names[0] ?? '', /^session-/);
      scratch = path.join(sessions, names[0] ?? '');
      assert.ok(existsSync(path.join(scratch, 'capture-1', 'engine')), 'the capture engine works in it');
      assert.deepEqual(
        readdirSync(tmp).filter((n) => n.startsWith('offshoot-session-')),
        [],
        'no session scratch in TMPDIR',
      );
    } finally {
      d1.proc.kill('SIGKILL');
      await d1.exited;
    }
    assert.ok(existsSync(scratch), 'a killed daemon cannot remove its scratch dir');

    // At-rest commands see only the database, never the hidden scratch.
    const status = s.cli(['status', '--json']);
    assert.equal(status.code, 0, status.stderr);
    const listed = (JSON.parse(status.stdout) as { branches: Array<{ db: string; branch: string }> }).branches.map(
      (b) => `${b.db}@${b.branch}`,
    );
    assert.deepEqual(listed, ['app@main']);
    assert.doesNotMatch(status.stdout, /scratch|session-/);
    const gc = s.cli(['gc', '--grace', '0s']);
    assert.equal(gc.code, 0, gc.stderr);
    assert.ok(existsSync(scratch), 'gc leaves the scratch alone');

    const d2 = await startDaemon(s, ['-flush-every', '0'], env());
    try {
      assert.equal(existsSync(scratch), false, 'serve swept the leftover before it answered');
      assert.deepEqual(readdirSync(sessions), []);
      assert.match(d2.stderr(), /offshoot: removed 1 session scratch dir\(s\) left by an earlier daemon\n/);
      assert.deepEqual(await d2.request({ op: 'dbs' }), { ok: true, databases: ['app'] });

      // The dead daemon's lease lapses (600 ms TTL); the reopened session gets a fresh dir, removed on close.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const reopen = s.cli(['session', 'open', 'app', '-socket', d2.sock]);
        if (reopen.code === 0) break;
        assert.match(reopen.stderr, /leased by/);
        assert.ok(Date.now() < deadline, reopen.stderr);
        await sleep(100);
      }
      const names = readdirSync(sessions);
      assert.equal(names.length, 1);
      assert.notEqual(path.join(sessions, names[0] ?? ''), scratch);
      const closed = s.cli(['session', 'close', 'app', '-socket', d2.sock]);
      assert.equal(closed.code, 0, closed.stderr);
      assert.deepEqual(readdirSync(sessions), [], 'a closed session removes its own scratch dir');
    } finally {
      assert.equal(await d2.stop(), 0);
    }
  });
});
