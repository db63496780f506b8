// offshoot_merge through a real `offshoot mcp` and the official MCP client: two attempts forked by the tools, written
// by the sqlite3 CLI, merged into main; a conflict listed with nothing changed, prefer resolving it; an agent without
// -allow-force refused on protected main. At rest and through a daemon serving the store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDaemon } from '../daemon/daemon-process.js';
import {
  asStoreDir,
  makeMcpStore,
  ok,
  refsSnapshot,
  refused,
  startMcp,
  type McpSession,
  type McpStore,
} from './mcp-harness.js';

async function attempt(s: McpStore, m: McpSession, name: string, sql: string): Promise<void> {
  ok(await m.call('offshoot_fork', { database: 'app', new_branch: name }));
  const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: name }))['path'] as string;
  s.sqlite(path, sql);
  ok(await m.call('offshoot_checkpoint', { database: 'app', branch: name, name: 'done' }));
}

async function mergeBoth(s: McpStore, m: McpSession): Promise<void> {
  await attempt(s, m, 'run-a', "UPDATE t SET v = 'A' WHERE id = 1; INSERT INTO t VALUES (10, 'a10');");
  await attempt(s, m, 'run-b', "UPDATE t SET v = 'B' WHERE id = 1; INSERT INTO t VALUES (20, 'b20');");
  const first = ok(await m.call('offshoot_merge', { database: 'app', source: 'run-a', target: 'main', force: true }));
  assert.deepEqual([first['applied'], first['backup'], first['checkpoint']], [true, 'main-pre-merge', 'merge']);
  const before = refsSnapshot(s.store);
  const held = await m.call('offshoot_merge', { database: 'app', source: 'run-b', target: 'main', force: true });
  const r = ok(held);
  assert.equal(r['applied'], false);
  assert.deepEqual(r['conflicts'], [
    {
      table: 't',
      kind: 'update/update',
      key: { id: 1 },
      base: { id: 1, v: 'a' },
      source: { id: 1, v: 'B' },
      target: { id: 1, v: 'A' },
    },
  ]);
  assert.match(held.text, /nothing was merged/);
  assert.deepEqual(refsSnapshot(s.store), before, 'a merge held by its conflicts wrote nothing');
  const args = { database: 'app', source: 'run-b', target: 'main', force: true, prefer: 'target' };
  assert.equal(ok(await m.call('offshoot_merge', args))['applied'], true);
  const rows = s.sqlite(s.cli(['checkout', 'app']).stdout.trim(), 'SELECT id, v FROM t ORDER BY id;');
  assert.equal(rows, '1|A\n2|b\n3|c\n10|a10\n20|b20\n');
}

/** A merge of a checkpoint of the source (`at`), not its head: only what it held is taken. */
async function mergeAtPoint(s: McpStore, m: McpSession): Promise<void> {
  ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'run-q' }));
  await attempt(s, m, 'run-p', "INSERT INTO t VALUES (30, 'p30');");
  const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'run-p' }))['path'] as string;
  s.sqlite(path, "INSERT INTO t VALUES (31, 'p31');");
  ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'run-p', name: 'later' }));
  const r = ok(await m.call('offshoot_merge', { database: 'app', source: 'run-p', target: 'run-q', at: 'done' }));
  assert.deepEqual([r['applied'], r['tables']], [true, [{ table: 't', inserted: 1, updated: 0, deleted: 0 }]]);
}

/** Resolved rows in the agent's hands: a stray one and a partial set refused in its terms, then a full set applied. */
async function mergeResolved(s: McpStore, m: McpSession): Promise<void> {
  ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'run-s' }));
  await attempt(s, m, 'run-r', "UPDATE t SET v = 'R' WHERE id = 2; DELETE FROM t WHERE id = 3;");
  const sPath = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'run-s' }))['path'] as string;
  s.sqlite(sPath, "UPDATE t SET v = 'S' WHERE id = 2; UPDATE t SET v = 'S3' WHERE id = 3;");
  ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'run-s', name: 'done' }));
  const merge = { database: 'app', source: 'run-r', target: 'run-s' };
  const held = ok(await m.call('offshoot_merge', merge));
  const conflicts = held['conflicts'] as Array<{ kind: string; key: Record<string, unknown> }>;
  assert.deepEqual(
    conflicts.map((c) => [c.kind, c.key]),
    [
      ['update/update', { id: 2 }],
      ['delete/update', { id: 3 }],
    ],
  );
  const before = refsSnapshot(s.store);
  const two = { table: 't', key: { id: 2 }, row: { id: 2, v: 'R+S' } };
  refused(
    await m.call('offshoot_merge', { ...merge, resolved: [two, { table: 't', key: { id: 1 }, row: null }] }),
    'INVALID_ARGUMENT',
    /names no conflicting row[\s\S]*keep in resolved only rows/,
  );
  refused(
    await m.call('offshoot_merge', { ...merge, resolved: [two] }),
    'MERGE_CONFLICT',
    /1 of 2 conflicting row\(s\)[\s\S]*to resolved, or give prefer/,
  );
  assert.deepEqual(refsSnapshot(s.store), before, 'a refused resolution wrote nothing');
  const call = await m.call('offshoot_merge', {
    ...merge,
    resolved: [two, { table: 't', key: { id: 3 }, row: null }],
  });
  const r = ok(call);
  assert.deepEqual([r['applied'], r['resolved'], r['prefer']], [true, 2, undefined]);
  assert.equal('warnings' in r, false);
  assert.match(call.text, /2 conflicting row\(s\) resolved with your rows/);
  const rows = s.sqlite(s.cli(['checkout', 'app@run-s']).stdout.trim(), 'SELECT id, v FROM t ORDER BY id;');
  assert.equal(rows, '1|A\n2|R+S\n10|a10\n20|b20\n');
}

test('offshoot_merge at rest; an agent without -allow-force is refused on protected main', async () => {
  const s = makeMcpStore();
  const plain = await startMcp(s.store, ['-reap-every', '0']);
  try {
    await attempt(s, plain, 'run-x', "UPDATE t SET v = 'X' WHERE id = 2;");
    refused(
      await plain.call('offshoot_merge', { database: 'app', source: 'run-x', target: 'main', force: true }),
      'PROTECTED',
      /-allow-force/,
    );
  } finally {
    await plain.close();
  }
  const m = await startMcp(s.store, ['-allow-force', '-reap-every', '0']);
  try {
    await mergeBoth(s, m);
    await mergeAtPoint(s, m);
    await mergeResolved(s, m);
  } finally {
    await m.close();
    s.cleanup();
  }
});

test('offshoot_merge through the daemon serving the store', async () => {
  const s = makeMcpStore();
  const daemon = await startDaemon(asStoreDir(s), ['-reap-every', '0']);
  const m = await startMcp(s.store, ['-allow-force', '-reap-every', '0']);
  try {
    await mergeBoth(s, m);
    await mergeAtPoint(s, m);
    await mergeResolved(s, m);
  } finally {
    await m.close();
    await daemon.stop();
    s.cleanup();
  }
});
