// After a daemon is killed with SIGKILL, the leases of its sessions name a holder that is provably gone: the next
// open takes them over instead of failing LEASE_HELD for 30 s, while a live session's lease is never released by
// accident.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

describe('a lease whose holder is gone', { timeout: 120_000 }, () => {
  let s: StoreDir;
  let d: DaemonProcess | undefined;

  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    assert.equal(s.cli(['fork', 'app', 'cli']).code, 0);
  });
  after(async () => {
    await d?.stop();
    s.cleanup();
  });

  test("releasing a live session's lease needs --force", async () => {
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    const open = await d.request({ op: 'open', db: 'app' });
    assert.equal(open.ok, true, JSON.stringify(open));
    const r = s.cli(['lease', 'release', 'app']);
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stderr, /live session/);
    assert.match(r.stderr, /--force/);
    assert.match(s.cli(['lease', 'list']).stdout, /^app@main held by /m);
  });

  test('after SIGKILL the next open takes the lease over at once, saying why', async () => {
    assert.ok(d);
    d.proc.kill('SIGKILL');
    await d.exited;
    const status = s.cli(['status', 'app', '--json']);
    const main = (JSON.parse(status.stdout) as { branches: Array<{ branch: string; state: string }> }).branches.find(
      (b) => b.branch === 'main',
    );
    assert.equal(main?.state, 'idle', 'a dead holder is not an active session');
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    const open = await d.request({ op: 'open', db: 'app' });
    assert.equal(open.ok, true, JSON.stringify(open));
    assert.match(d.stderr(), /took over the lease of app@main from .*no such process/);
    const close = await d.request({ op: 'close', db: 'app' });
    assert.equal(close.ok, true, JSON.stringify(close));
  });

  test('a lease that proves nothing about its holder says when it expires; release needs no force', () => {
    assert.equal(s.cli(['lease', 'acquire', 'app@cli', '--ttl', '1h']).code, 0);
    const r = s.cli(['lease', 'acquire', 'app@cli']);
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stderr, /until \S+ \(in \d+s\)/);
    const rel = s.cli(['lease', 'release', 'app@cli']);
    assert.equal(rel.code, 0, rel.stderr);
  });
});
