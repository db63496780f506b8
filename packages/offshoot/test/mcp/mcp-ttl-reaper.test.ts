// Fork TTLs (the server default, explicit, none, -default-ttl 0) and the background reaper of `offshoot mcp`:
// its cadence, a stranded delete claim, a checkout holding work, and stepping aside while a daemon serves the store.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDaemon, until } from '../daemon/daemon-process.js';
import { baseEnv, dump, holdSqlite3, offshootBin } from '../e2e/cli-harness.js';
import { asStoreDir, makeMcpStore, ok, refused, startMcp, type McpStore } from './mcp-harness.js';

const HOUR = 3_600_000;

function branchNames(s: McpStore): string[] {
  const j = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as { branches: Array<{ branch: string }> };
  return j.branches.map((b) => b.branch);
}

test('fork TTL: the server default, an explicit TTL, none, and -default-ttl 0 / none / 90m', async () => {
  const s = makeMcpStore();
  try {
    const m = await startMcp(s.store, ['-reap-every', '0']);
    try {
      const t0 = Date.now();
      const d = ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'dflt' }));
      assert.equal(d.ttl, '24h0m0s');
      assert.equal(d.ttl_source, 'default');
      const exp = Date.parse(d.expires_at as string);
      assert.ok(exp >= t0 + 24 * HOUR && exp <= Date.now() + 24 * HOUR, 'expiry is a day from the call');
      const e = ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'expl', ttl: '2h' }));
      assert.equal(e.ttl, '2h0m0s');
      assert.equal(e.ttl_source, 'explicit');
      const n = ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'never', ttl: 'none' }));
      assert.equal(n.ttl, null);
      assert.equal(n.expires_at, null);
      assert.match(
        (await m.call('offshoot_list', { database: 'app' })).text,
        /^app@never head=1 checkpoints=\[fork\] protected=false checked_out=false$/m,
      );
      const status = s.cli(['status', 'app']).stdout;
      assert.match(status, /app@dflt .*ttl=24h0m0s/);
      assert.match(status, /app@expl .*ttl=2h0m0s/);
      assert.doesNotMatch(status, /app@never .*ttl=/);
    } finally {
      await m.close();
    }
    for (const [flag, want] of [
      ['0', null],
      ['none', null],
      ['90m', '1h30m0s'],
    ] as const) {
      const m2 = await startMcp(s.store, ['-default-ttl', flag, '-reap-every', 'none']);
      try {
        const r = ok(await m2.call('offshoot_fork', { database: 'app', new_branch: `d-${flag}` }));
        assert.equal(r.ttl, want, `-default-ttl ${flag}`);
        assert.equal(r.ttl_source, want === null ? 'none' : 'default');
        assert.equal(
          ok(await m2.call('offshoot_fork', { database: 'app', new_branch: `x-${flag}`, ttl: '3h' })).ttl,
          '3h0m0s',
        );
      } finally {
        await m2.close();
      }
    }
    const bad = spawnSync(offshootBin, ['-store', s.store, 'mcp', '-default-ttl', '-5m'], {
      env: baseEnv(),
      encoding: 'utf8',
      input: '',
    });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /-default-ttl must not be negative/);
    assert.equal(bad.stdout, '', 'nothing but protocol on stdout');
  } finally {
    s.cleanup();
  }
});

test('the reaper expires a TTL fork on its cadence and clears a stranded delete claim', async () => {
  const s = makeMcpStore();
  const m = await startMcp(s.store, ['-reap-every', '200ms']);
  try {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'brief', ttl: '1s' }));
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'kept', ttl: '1h' }));
    s.cli(['fork', 'app', 'claimed']);
    const refPath = join(s.store, 'refs/app/claimed');
    const ref = JSON.parse(readFileSync(refPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(
      refPath,
      JSON.stringify({ ...ref, deleting: true, deleting_at: new Date(Date.now() - 60_000).toISOString() }),
    );
    await until(() => !branchNames(s).includes('brief'), 'the reaper to expire app@brief');
    await until(
      () => !('deleting' in JSON.parse(readFileSync(refPath, 'utf8'))),
      'the reaper to clear the stranded claim',
      15_000,
    );
    assert.ok(branchNames(s).includes('kept'), 'a fork within its TTL stays');
    assert.ok(branchNames(s).includes('claimed'), 'clearing a claim keeps the branch');
    await until(() => m.stderr().includes('reaper: reaped app@brief'), 'the reap to be logged');
    await until(
      () => m.stderr().includes('cleared stale delete claim(s) app@claimed'),
      'the cleared claim to be logged',
    );
  } finally {
    await m.close();
    s.cleanup();
  }
});

test('the reaper steps aside while a daemon serves the store, and takes over when it stops', async () => {
  const s = makeMcpStore();
  const storeDir = asStoreDir(s);
  // The daemon's own janitor is off, so only the MCP reaper could expire anything.
  const daemon = await startDaemon(storeDir, ['-reap-every', '0']);
  const m = await startMcp(s.store, ['-reap-every', '200ms']);
  try {
    await until(
      () => m.stderr().includes('reaper: deferring to the daemon serving this store'),
      'the reaper to step aside',
    );
    assert.equal(m.stderr().match(/deferring to the daemon/g)?.length, 1, 'it says so once');
    s.cli(['fork', 'app', 'brief', '--ttl', '1s']);
    await until(() => /app@brief .*remaining=expired/.test(s.cli(['status', 'app']).stdout), 'app@brief to expire');
    // A negative check needs a window: ten reaper periods with the daemon up, and the expired fork is still there.
    await new Promise((r) => setTimeout(r, 2000));
    assert.ok(branchNames(s).includes('brief'), 'no reap while the daemon serves the store');
    assert.equal(await daemon.stop(), 0);
    await until(() => !branchNames(s).includes('brief'), 'the reaper to take over');
    await until(() => m.stderr().includes('the daemon is gone; reaping here again'), 'the reaper to say it took over');
  } finally {
    await daemon.stop();
    await m.close();
    s.cleanup();
  }
});

test('an agent cannot have its uncheckpointed writes reaped: ttl 1ns postpones, offshoot_destroy refuses without force', async () => {
  const s = makeMcpStore();
  const m = await startMcp(s.store, ['-reap-every', '200ms']);
  try {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'work' }));
    const co = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'work' }))['path'] as string;
    const app = await holdSqlite3(co, "INSERT INTO t(v) VALUES ('a second ago');");
    try {
      ok(await m.call('offshoot_touch', { database: 'app', branch: 'work', ttl: '1ns' }));
      await until(
        () => m.stderr().includes('reaper: postponed app@work: its checkout holds writes no checkpoint has'),
        'the reaper to postpone the reap',
      );
      const listed = ok(await m.call('offshoot_list', { database: 'app' }))['branches'] as Array<
        Record<string, unknown>
      >;
      assert.equal(listed.find((b) => b['branch'] === 'work')?.['reap_postponed'], 'uncheckpointed_writes');
      refused(
        await m.call('offshoot_destroy', { database: 'app', branch: 'work' }),
        'PROTECTED',
        /holds writes no checkpoint has in its checkout; destroying it discards them/,
      );
      refused(await m.call('offshoot_destroy', { database: 'app', branch: 'work', force: true }), 'PROTECTED');
      await app.run("INSERT INTO t(v) VALUES ('later');");
    } finally {
      await app.close();
    }
    // A TTL of 1ns expires at the checkpoint itself: a longer one keeps the branch while its content is checked.
    ok(await m.call('offshoot_touch', { database: 'app', branch: 'work', ttl: '1h' }));
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'work', name: 'kept' }));
    const out = join(s.dir, 'work.db');
    s.cli(['export', 'app@work@kept', out]);
    assert.match(dump(out), /'a second ago'/);
    assert.match(dump(out), /'later'/);
    ok(await m.call('offshoot_touch', { database: 'app', branch: 'work', ttl: '1ns' }));
    await until(() => m.stderr().includes('reaper: reaped app@work'), 'the reaper to reap it once settled');
  } finally {
    await m.close();
    s.cleanup();
  }
});
