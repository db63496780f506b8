// offshoot_log and moments through a real MCP client: the agent's changes are in the branch log under the tool that
// made them, at rest and riding a daemon, and a moment names a state in every tool that takes one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DaemonProcess, startDaemon } from '../daemon/daemon-process.js';
import { asStoreDir, makeMcpStore, type McpSession, type McpStore, ok, refused, startMcp } from './mcp-harness.js';

type Rec = { op: string; actor: string; surface: string; txid_after: number; name?: string };

describe('offshoot_log and moments', () => {
  let s: McpStore;
  let m: McpSession;
  let daemon: DaemonProcess | undefined;
  before(async () => {
    s = makeMcpStore();
    m = await startMcp(s.store, ['-reap-every', '0']);
  });
  after(async () => {
    await m.close();
    await daemon?.stop();
    s.cleanup();
  });

  test('at rest: each change is recorded as the agent through the tool that made it', async () => {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'a1', ttl: '1h' }));
    const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'a1' })).path as string;
    s.sqlite(path, "INSERT INTO t(v) VALUES ('d');");
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'a1', name: 'four' }));
    s.sqlite(path, "INSERT INTO t(v) VALUES ('e');");
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'a1', name: 'five' }));
    const log = ok(await m.call('offshoot_log', { database: 'app', branch: 'a1' }));
    const records = log.records as Rec[];
    assert.deepEqual(
      records.map((r) => [r.op, r.actor, r.surface, r.name]),
      [
        ['fork', 'agent', 'mcp:offshoot_fork', undefined],
        ['checkpoint', 'agent', 'mcp:offshoot_checkpoint', 'four'],
        ['checkpoint', 'agent', 'mcp:offshoot_checkpoint', 'five'],
      ],
    );
    const humans = ok(await m.call('offshoot_log', { database: 'app', branch: 'a1', actor: 'human' }));
    assert.deepEqual(humans.records, []);
    // A human's CLI change of the same branch is the human's.
    s.cli(['touch', 'app@a1']);
    const all = (ok(await m.call('offshoot_log', { database: 'app', branch: 'a1' })).records as Rec[]).map((r) => [
      r.op,
      r.actor,
      r.surface,
    ]);
    assert.deepEqual(all.at(-1), ['touch', 'human', 'cli']);
  });

  test('a moment in query, diff and rollback', async () => {
    const four = (ok(await m.call('offshoot_log', { database: 'app', branch: 'a1' })).records as Rec[])[1]?.txid_after;
    assert.equal(typeof four, 'number');
    const q = ok(
      await m.call('offshoot_query', {
        database: 'app',
        branch: 'a1',
        at: `tx:${four}`,
        sql: 'SELECT count(*) FROM t',
      }),
    );
    assert.deepEqual(q.rows, [[4]]);
    const d = ok(
      await m.call('offshoot_diff', {
        database: 'app',
        source: 'a1',
        source_at: `tx:${four}`,
        target: 'a1',
        summary: true,
      }),
    );
    assert.ok(JSON.stringify(d).includes('"t"'), JSON.stringify(d));
    const r = ok(await m.call('offshoot_rollback', { database: 'app', branch: 'a1', to: `tx:${four}` }));
    assert.equal(r.txid, four);
    const after = ok(await m.call('offshoot_query', { database: 'app', branch: 'a1', sql: 'SELECT count(*) FROM t' }));
    assert.deepEqual(after.rows, [[4]]);
    refused(
      await m.call('offshoot_query', { database: 'app', branch: 'a1', at: 'tx:x', sql: 'SELECT 1' }),
      'INVALID_ARGUMENT',
    );
    refused(
      await m.call('offshoot_query', { database: 'app', branch: 'a1', at: 'tx:999', sql: 'SELECT 1' }),
      'NOT_FOUND',
    );
  });

  test('riding a daemon, the record still names the tool', async () => {
    daemon = await startDaemon(asStoreDir(s), ['-flush-every', '0', '-reap-every', '0']);
    const f = ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'a2', ttl: '1h' }));
    assert.equal(f.via, 'daemon');
    const log = ok(await m.call('offshoot_log', { database: 'app', branch: 'a2' }));
    assert.deepEqual(
      (log.records as Rec[]).map((r) => [r.op, r.actor, r.surface]),
      [['fork', 'agent', 'mcp:offshoot_fork']],
    );
  });
});
