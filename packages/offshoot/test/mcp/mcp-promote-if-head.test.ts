// offshoot_promote's if_head through a real `offshoot mcp`: a compare-and-swap on the target's head that refuses
// BASE_MOVED (with an agent's hint) once another promote moved it, at rest and through a daemon serving the store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDaemon } from '../daemon/daemon-process.js';
import { asStoreDir, makeMcpStore, ok, refused, startMcp, type McpSession, type McpStore } from './mcp-harness.js';

/** Forks two attempts of app@main through the tools, each writing a row and checkpointing it; returns the fork txid. */
async function twoAttempts(s: McpStore, m: McpSession): Promise<number> {
  let head = -1;
  for (const name of ['run-a', 'run-b']) {
    head = ok(await m.call('offshoot_fork', { database: 'app', new_branch: name }))['txid'] as number;
    const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: name }))['path'] as string;
    s.sqlite(path, `INSERT INTO t(v) VALUES ('${name}');`);
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: name, name: 'done' }));
  }
  return head;
}

async function promoteBoth(s: McpStore, m: McpSession): Promise<void> {
  const head = await twoAttempts(s, m);
  const args = (source: string) => ({ database: 'app', source, target: 'main', force: true, if_head: head });
  const landed = ok(await m.call('offshoot_promote', args('run-a')));
  assert.equal(landed['backup'], 'main-pre-promote');
  const second = await m.call('offshoot_promote', args('run-b'));
  refused(second, 'BASE_MOVED', new RegExp(`app@main moved since txid ${head}`));
  assert.match(second.text, /without if_head/, "the hint names the tool's argument");
  assert.match(s.sqlite(s.cli(['checkout', 'app']).stdout.trim(), 'SELECT v FROM t ORDER BY id;'), /run-a/);
}

test('offshoot_promote if_head at rest', async () => {
  const s = makeMcpStore();
  const m = await startMcp(s.store, ['-allow-force', '-reap-every', '0']);
  try {
    await promoteBoth(s, m);
  } finally {
    await m.close();
    s.cleanup();
  }
});

test('offshoot_promote if_head through the daemon serving the store', async () => {
  const s = makeMcpStore();
  const daemon = await startDaemon(asStoreDir(s), ['-reap-every', '0']);
  const m = await startMcp(s.store, ['-allow-force', '-reap-every', '0']);
  try {
    await promoteBoth(s, m);
  } finally {
    await m.close();
    await daemon.stop();
    s.cleanup();
  }
});
