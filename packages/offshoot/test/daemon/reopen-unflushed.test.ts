// Writes a SIGKILLed daemon had captured but not flushed are never discarded by the next open: they are kept as an
// undo branch with the checkout's state, and the open says so (wire `warnings`, a CLI warning on stderr).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Response } from '../../src/protocol/wire.js';
import { dump, runSql } from '../ops/sqlite-cli.js';
import { type CliRun, makeStoreDir, sleep, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

const ENV = { OFFSHOOT_LEASE_TTL_MS: '600' };

/** Retries until the dead daemon's lease has lapsed (600 ms); anything but LEASE_HELD ends the wait. */
async function reopened<T extends Response | CliRun>(attempt: () => Promise<T> | T): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await attempt();
    const held = 'ok' in r ? r.code === 'LEASE_HELD' : r.code === 6 && /leased by/.test(r.stderr);
    if (!held || Date.now() > deadline) return r;
    await sleep(100);
  }
}

async function kill(d: DaemonProcess): Promise<void> {
  d.proc.kill('SIGKILL');
  await d.exited;
}

function exported(s: StoreDir, target: string): string {
  const out = s.file(`${target.replace('@', '_')}-${Date.now()}.db`);
  const r = s.cli(['export', target, out]);
  assert.equal(r.code, 0, r.stderr);
  return dump(out);
}

describe('reopening a session after a daemon SIGKILL', () => {
  let s: StoreDir;
  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
  });
  after(() => s.cleanup());

  test('keeps the unflushed writes as <branch>-pre-reopen and reports it on the wire and in the CLI', async () => {
    const d1 = await startDaemon(s, ['-flush-every', '0'], ENV);
    let path: string;
    try {
      const open = await d1.request({ op: 'open', db: 'app', branch: 'main' });
      assert.equal(open.ok, true, open.error);
      assert.equal(open.warnings, undefined, 'a clean open warns of nothing');
      path = open.checkout ?? '';
      runSql(path, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('durable');");
      assert.equal((await d1.request({ op: 'flush', db: 'app', branch: 'main' })).ok, true);
      runSql(path, "INSERT INTO t VALUES ('unflushed');");
    } finally {
      await kill(d1);
    }

    const d2 = await startDaemon(s, ['-flush-every', '0'], ENV);
    try {
      const res = await reopened(() => d2.request({ op: 'open', db: 'app', branch: 'main' }));
      assert.equal(res.ok, true, res.error);
      assert.equal(res.checkout, path);
      assert.equal(res.warnings?.length, 1, JSON.stringify(res));
      assert.match(res.warnings?.[0] ?? '', /app@main-pre-reopen/);
      assert.doesNotMatch(dump(path), /unflushed/, 'the reopened checkout holds the durable head');
      assert.match(exported(s, 'app@main-pre-reopen'), /'durable'.*\n.*'unflushed'/s, 'the undo branch kept them');
      assert.doesNotMatch(exported(s, 'app@main'), /unflushed/, 'the branch itself is at its durable head');
      runSql(path, "INSERT INTO t VALUES ('second');");
    } finally {
      await kill(d2);
    }

    const d3 = await startDaemon(s, ['-flush-every', '0'], ENV);
    try {
      const r = await reopened(() => s.cli(['session', 'open', 'app', '-socket', d3.sock]));
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), path);
      assert.match(r.stderr, /^offshoot: warning: .*app@main-pre-reopen-2/m, 'the CLI prints the warning');
      assert.match(exported(s, 'app@main-pre-reopen-2'), /'second'/, 'a second crash never replaces the first');
      assert.match(exported(s, 'app@main-pre-reopen'), /'unflushed'/);
    } finally {
      await kill(d3);
    }
  });
});
