// A daemon session's lease lasts minutes and stands on its daemon's liveness object (liveness/<id>, rewritten every
// third of its length): while the daemon runs nobody takes the branch, however many rewrites go by; once the daemon
// is killed the branch is free as soon as that object is stale, long before the lease itself would expire. The
// killed daemon runs as if on another machine, so the dead-process shortcut cannot be what frees it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeStoreDir, startDaemon, until, type StoreDir } from './daemon-process.js';
import { killDaemon, otherMachine } from './multi-daemon-store.js';

// The liveness object lasts 6 s (rewritten every 2 s): long enough that a loaded machine never lets a live daemon's
// object lapse (which would renew every session's lease); the sessions' own leases last 15 minutes.
const LIVENESS_MS = 6000;

interface StoredRef {
  epoch: number;
  lease_holder?: string;
  lease_expiry?: string;
  lease_liveness?: string;
}

describe('leases standing on a daemon liveness object', { timeout: 180_000 }, () => {
  const m = otherMachine();
  let s: StoreDir;
  const ref = (branch: string): StoredRef =>
    JSON.parse(readFileSync(path.join(s.store, 'refs', 'app', branch), 'utf8')) as StoredRef;
  const livenessFile = (id: string): string => path.join(s.store, 'liveness', id);
  // Elsewhere: as if on another machine (its SIGTERM then reaches only the launcher, so it is only ever killed).
  const start = (elsewhere: boolean) =>
    startDaemon(
      s,
      ['-flush-every', '0', '-reap-every', '0'],
      { ...(elsewhere ? m.env : {}), OFFSHOOT_LEASE_TTL_MS: String(LIVENESS_MS) },
      s.file('d.sock'),
      elsewhere ? m.launcher : [],
    );

  before(() => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    assert.equal(s.cli(['fork', 'app', 'b1']).code, 0);
  });
  after(() => s.cleanup());

  test("a live daemon's lease is refused across liveness rewrites; a clean stop gives it back and removes the object", async () => {
    const d = await start(false);
    try {
      const open = await d.request({ op: 'open', db: 'app' });
      assert.equal(open.ok, true, JSON.stringify(open));
      const r = ref('main');
      const id = r.lease_liveness ?? '';
      assert.match(id, /^[0-9a-f]{16}$/, 'the lease names its daemon liveness object');
      assert.ok(Date.parse(r.lease_expiry ?? '') - Date.now() > 10 * 60_000, 'the lease itself lasts minutes');
      const seen = new Set<string>();
      while (seen.size < 4) {
        const now = readFileSync(livenessFile(id), 'utf8');
        seen.add(now);
        const taken = s.cli(['lease', 'acquire', 'app']);
        assert.equal(taken.code, 6, `a live daemon's lease is never taken: ${taken.stdout}${taken.stderr}`);
        assert.match(taken.stderr, /leased by \S+ until \S+ \(in \d+s\), renewed while its daemon runs/);
        await until(() => readFileSync(livenessFile(id), 'utf8') !== now, 'the next liveness rewrite');
      }
      const st = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as {
        branches: Array<{ branch: string; state: string }>;
      };
      assert.equal(st.branches.find((b) => b.branch === 'main')?.state, 'active');
      assert.equal(ref('main').lease_expiry, r.lease_expiry, 'no session lease renewal in the meantime');
      assert.equal(await d.stop(), 0);
      assert.equal(existsSync(livenessFile(id)), false, 'a clean stop removes the liveness object');
      assert.equal(ref('main').lease_holder, undefined, 'and gives the lease back');
    } finally {
      await d.stop();
    }
  });

  test('after SIGKILL the branch is free once the liveness object is stale, long before the lease expires', async (t) => {
    t.diagnostic(`the daemon runs as if on another machine by ${m.how}`);
    const d = await start(true);
    const open = await d.request({ op: 'open', db: 'app', branch: 'b1' });
    assert.equal(open.ok, true, JSON.stringify(open));
    const held = ref('b1');
    await killDaemon(d, m);
    assert.ok(existsSync(livenessFile(held.lease_liveness ?? '')), 'a killed daemon leaves its liveness object');
    let last = '';
    await until(() => {
      const r = s.cli(['lease', 'acquire', 'app@b1']);
      last = r.stdout + r.stderr;
      return r.code === 0;
    }, 'the liveness object to go stale');
    assert.ok(Date.now() < Date.parse(held.lease_expiry ?? ''), 'taken while the long lease had not expired');
    assert.match(last, /acquired app@b1/);
    const now = ref('b1');
    assert.equal(now.epoch, held.epoch + 1, 'the takeover bumps the epoch, fencing the dead session');
    assert.equal(now.lease_liveness, undefined, 'the new lease stands on no liveness object');
    assert.equal(s.cli(['lease', 'release', 'app@b1']).code, 0);
  });
});
