// The data-loss and posture fixes over a real stdio connection: offshoot_checkout keeps uncheckpointed writes and
// says so, undo-point names are reserved, a TTL cannot be armed on protected main, and the undo point of protected
// main cannot be rewritten by checkpoint, rollback or a writable checkout. Every refusal changes no ref.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { undoPointName } from '../../src/ops/helpers/branch/undo-point-names.js';
import { makeMcpStore, ok, refsSnapshot, refused, startMcp, type McpSession, type McpStore } from './mcp-harness.js';

describe('offshoot mcp: data loss and the posture', () => {
  let s: McpStore;
  let m: McpSession;
  before(async () => {
    s = makeMcpStore();
    const main = s.cli(['checkout', 'app']).stdout.trim();
    s.sqlite(main, "INSERT INTO t(v) VALUES ('main-2');");
    s.cli(['checkpoint', 'app', 'v2']);
    m = await startMcp(s.store);
  });
  after(async () => {
    await m.close();
    s.cleanup();
  });

  async function unchanged(tool: string, args: Record<string, unknown>, code: string, re?: RegExp): Promise<void> {
    const before = refsSnapshot(s.store);
    refused(await m.call(tool, args), code, re);
    assert.deepEqual(refsSnapshot(s.store), before, `${tool} ${JSON.stringify(args)} changed nothing`);
  }

  test('a second offshoot_checkout keeps uncheckpointed writes and says so', async () => {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'work' }));
    const first = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'work' }));
    s.sqlite(first.path as string, "INSERT INTO t(v) VALUES ('unsaved');");
    const again = await m.call('offshoot_checkout', { database: 'app', branch: 'work' });
    assert.equal(ok(again).path, first.path);
    assert.equal(ok(again).dirty, true);
    assert.match(again.text, /no checkpoint has recorded yet/);
    assert.equal(s.sqlite(first.path as string, "SELECT count(*) FROM t WHERE v = 'unsaved';").trim(), '1');
  });

  test('undo-point names cannot be taken', async () => {
    for (const name of ['main-pre-promote', 'main-pre-rollback', 'main-pre-reopen'])
      await unchanged('offshoot_fork', { database: 'app', new_branch: name }, 'INVALID_NAME', /keeps for itself/);
  });

  test('no TTL can be armed on protected main', async () => {
    await unchanged('offshoot_touch', { database: 'app', branch: 'main', ttl: '1s' }, 'PROTECTED', /TTL/);
    ok(await m.call('offshoot_touch', { database: 'app', branch: 'main' }));
  });

  test('the undo point of protected main is read-only to the agent', async () => {
    ok(await m.call('offshoot_rollback', { database: 'app', branch: 'main', to: 'init' }));
    const undo = { database: 'app', branch: 'main-pre-rollback' };
    await unchanged('offshoot_checkout', undo, 'PROTECTED', /undo point of protected app@main/);
    // The human checked it out; the agent writes into that file and tries to record it.
    const file = s.cli(['checkout', 'app@main-pre-rollback']).stdout.trim();
    s.sqlite(file, "INSERT INTO t(v) VALUES ('agent-chosen');");
    await unchanged('offshoot_checkpoint', { ...undo, name: 'mine' }, 'PROTECTED', /undo point/);
    await unchanged('offshoot_rollback', { ...undo, to: 'fork' }, 'PROTECTED', /undo point/);
  });

  test('hints are written for the agent: no CLI flags', async () => {
    const meta = await m.call('offshoot_checkpoint', { database: 'app', name: 'tagged', meta: { '': 'v' } });
    refused(meta, 'INVALID_ARGUMENT');
    assert.doesNotMatch(meta.text, /--meta/);
    const self = await m.call('offshoot_promote', { database: 'app', source: 'work', target: 'work' });
    refused(self, 'INVALID_ARGUMENT');
    assert.doesNotMatch(self.text, /--onto/);
  });
});

describe('offshoot mcp: no route past the posture', () => {
  let s: McpStore;
  let m: McpSession;
  before(async () => {
    s = makeMcpStore();
    m = await startMcp(s.store, ['-reap-every', '0']);
    ok(await m.call('offshoot_rollback', { database: 'app', branch: 'main', to: 'init' }));
    // The human makes a writable checkout of main's undo point (as the refusal of offshoot_checkout tells the agent
    // to ask), and the agent writes into it.
    const file = s.cli(['checkout', 'app@main-pre-rollback']).stdout.trim();
    s.sqlite(file, "INSERT INTO t(v) VALUES ('agent-chosen');");
  });
  after(async () => {
    await m.close();
    s.cleanup();
  });

  async function unchanged(tool: string, args: Record<string, unknown>, code: string, re?: RegExp): Promise<void> {
    const before = refsSnapshot(s.store);
    refused(await m.call(tool, args), code, re);
    assert.deepEqual(refsSnapshot(s.store), before, `${tool} ${JSON.stringify(args)} changed nothing`);
  }

  test('a fork or promote of the undo point of protected main does not checkpoint the agent’s writes into it', async () => {
    const undo = /undo point of protected app@main/;
    await unchanged(
      'offshoot_fork',
      { database: 'app', branch: 'main-pre-rollback', new_branch: 'copy' },
      'PROTECTED',
      undo,
    );
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'work' }));
    await unchanged(
      'offshoot_promote',
      { database: 'app', source: 'main-pre-rollback', target: 'work' },
      'PROTECTED',
      undo,
    );
  });

  test('an empty name is invalid in every tool schema and refused', async () => {
    const { tools } = await m.client.listTools();
    const names = [
      'database',
      'branch',
      'source',
      'target',
      'new_branch',
      'to',
      'name',
      'at',
      'source_at',
      'target_at',
    ];
    for (const t of tools) {
      const props = (t.inputSchema.properties ?? {}) as Record<string, { type?: string; minLength?: number }>;
      for (const [arg, schema] of Object.entries(props))
        if (names.includes(arg) && schema.type === 'string')
          assert.equal(schema.minLength, 1, `${t.name}.${arg} allows an empty name`);
    }
    const before = refsSnapshot(s.store);
    const r = await m.call('offshoot_rollback', { database: 'app', branch: '', to: 'init' });
    assert.equal(r.isError, true, r.text);
    assert.deepEqual(refsSnapshot(s.store), before);
  });

  test('the shortened undo-point name of a long protected branch is reserved', async () => {
    const long = `b${'x'.repeat(125)}`;
    s.cli(['fork', 'app', long]);
    s.cli(['protect', `app@${long}`]);
    for (const kind of ['pre-rollback', 'pre-promote', 'pre-reopen'] as const) {
      const stem = undoPointName(long, kind).slice(0, -(kind.length + 1));
      await unchanged('offshoot_fork', { database: 'app', new_branch: stem }, 'INVALID_NAME', /undo point/);
    }
  });

  test('offshoot.* meta keys are offshoot’s: a fork cannot pass for an undo point', async () => {
    const meta = { 'offshoot.safety': 'pre-rollback', 'offshoot.of': 'main' };
    await unchanged('offshoot_fork', { database: 'app', new_branch: 'fake', meta }, 'INVALID_ARGUMENT', /offshoot\./);
    await unchanged(
      'offshoot_checkpoint',
      { database: 'app', branch: 'work', name: 'tagged', meta: { 'offshoot.of': 'main' } },
      'INVALID_ARGUMENT',
      /offshoot\./,
    );
  });
});
