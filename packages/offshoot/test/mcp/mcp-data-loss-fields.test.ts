// What offshoot's data-loss guards report reaches an agent in the catalogue's fields through a real `offshoot mcp`
// (its client validates every structuredContent against the listed output schema), at rest and riding a daemon:
// offshoot_list's reap_postponed for an expired fork whose checkout holds uncheckpointed writes, offshoot_destroy's
// discarded (refused without force), and offshoot_promote's earlier_backup (a human's checkpoint kept aside) and
// if_head.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDaemon } from '../daemon/daemon-process.js';
import { asStoreDir, makeMcpStore, ok, refused, type McpSession, type McpStore, startMcp } from './mcp-harness.js';

/** Forks `name` from app@main, writes a row in its checkout and returns the checkout's path. */
async function forkAndWrite(s: McpStore, m: McpSession, name: string): Promise<string> {
  ok(await m.call('offshoot_fork', { database: 'app', new_branch: name }));
  const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: name }))['path'] as string;
  s.sqlite(path, `INSERT INTO t(v) VALUES ('${name}');`);
  return path;
}

async function walk(s: McpStore, m: McpSession): Promise<void> {
  await forkAndWrite(s, m, 'lost');
  ok(await m.call('offshoot_touch', { database: 'app', branch: 'lost', ttl: '1ns' }));
  const listed = ok(await m.call('offshoot_list', { database: 'app' }))['branches'] as Array<Record<string, unknown>>;
  assert.equal(listed.find((b) => b['branch'] === 'lost')?.['reap_postponed'], 'uncheckpointed_writes');
  refused(
    await m.call('offshoot_destroy', { database: 'app', branch: 'lost' }),
    'PROTECTED',
    /holds writes no checkpoint has/,
  );
  const destroyed = ok(await m.call('offshoot_destroy', { database: 'app', branch: 'lost', force: true }));
  assert.equal((destroyed['discarded'] as { reason?: string } | undefined)?.reason, 'uncheckpointed_writes');

  for (const run of ['run-a', 'run-b']) {
    await forkAndWrite(s, m, run);
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: run, name: 'done' }));
  }
  // Meanwhile a human checkpoints main: that state is in no other branch once the first promote replaces it.
  s.sqlite(s.cli(['checkout', 'app']).stdout.trim(), "INSERT INTO t(v) VALUES ('human');");
  s.cli(['checkpoint', 'app', 'human']);
  const first = ok(await m.call('offshoot_promote', { database: 'app', source: 'run-a', target: 'main', force: true }));
  assert.equal(first['if_head'], null, 'no if_head asked, none required');
  assert.equal(first['earlier_backup'], undefined);
  const head = first['txid'] as number;
  const second = ok(
    await m.call('offshoot_promote', {
      database: 'app',
      source: 'run-b',
      target: 'main',
      force: true,
      if_head: head,
    }),
  );
  assert.equal(second['if_head'], head);
  assert.equal(second['backup'], 'main-pre-promote');
  assert.equal(second['earlier_backup'], 'main-pre-promote-2', "the human's checkpoint had no other copy: kept aside");
}

test('reap_postponed, discarded, earlier_backup and if_head at rest', async () => {
  const s = makeMcpStore();
  const m = await startMcp(s.store, ['-allow-force', '-reap-every', '0']);
  try {
    await walk(s, m);
  } finally {
    await m.close();
    s.cleanup();
  }
});

test('reap_postponed, discarded, earlier_backup and if_head through the daemon serving the store', async () => {
  const s = makeMcpStore();
  const daemon = await startDaemon(asStoreDir(s), ['-reap-every', '0']);
  const m = await startMcp(s.store, ['-allow-force', '-reap-every', '0']);
  try {
    await walk(s, m);
  } finally {
    await m.close();
    await daemon.stop();
    s.cleanup();
  }
});
