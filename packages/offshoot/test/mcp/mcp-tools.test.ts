// The tool surface as a host sees it, over a real stdio MCP connection: names, hints, schemas, the prompt, and bad input.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { offshootBin } from '../e2e/cli-harness.js';
import { makeMcpStore, ok, refused, startMcp, type McpSession, type McpStore } from './mcp-harness.js';

const EXPECTED: Record<string, [boolean, boolean, boolean]> = {
  // [readOnlyHint, destructiveHint, idempotentHint]
  offshoot_list: [true, false, true],
  offshoot_diff: [true, false, true],
  offshoot_query: [true, false, true],
  offshoot_log: [true, false, true],
  offshoot_checkout: [false, false, true],
  offshoot_fork: [false, false, false],
  offshoot_checkpoint: [false, false, false],
  offshoot_touch: [false, false, true],
  offshoot_rollback: [false, true, false],
  offshoot_promote: [false, true, false],
  offshoot_destroy: [false, true, true],
};

describe('offshoot mcp: the tool surface', () => {
  let s: McpStore;
  let m: McpSession;
  before(async () => {
    s = makeMcpStore();
    m = await startMcp(s.store);
  });
  after(async () => {
    await m.close();
    s.cleanup();
  });

  test('nine tools plus query, each with all four hints set explicitly and an output schema', async () => {
    const { tools } = await m.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(EXPECTED).sort());
    assert.ok(!tools.some((t) => t.name === 'offshoot_protect'), 'protect is CLI only');
    for (const t of tools) {
      const [ro, destructive, idem] = EXPECTED[t.name] as [boolean, boolean, boolean];
      assert.equal(t.annotations?.readOnlyHint, ro, `${t.name} readOnlyHint`);
      assert.equal(t.annotations?.destructiveHint, destructive, `${t.name} destructiveHint`);
      assert.equal(t.annotations?.idempotentHint, idem, `${t.name} idempotentHint`);
      assert.equal(t.annotations?.openWorldHint, false, `${t.name} openWorldHint`);
      assert.equal(t.outputSchema?.type, 'object', `${t.name} has an output schema`);
      assert.ok((t.description ?? '').length > 80, `${t.name} teaches when to use it`);
      // The client validates structuredContent against this schema on every call.
      const validator = (m.client as unknown as { getToolOutputValidator(n: string): unknown }).getToolOutputValidator(
        t.name,
      );
      assert.equal(typeof validator, 'function', `the client validates ${t.name}'s results`);
    }
  });

  test('argument names are those of the earlier server, with main as the default branch', async () => {
    const { tools } = await m.client.listTools();
    const props = (n: string) => Object.keys((tools.find((t) => t.name === n)?.inputSchema.properties ?? {}) as object);
    const required = (n: string) => tools.find((t) => t.name === n)?.inputSchema.required ?? [];
    // ephemeral is ours, additive and optional.
    assert.deepEqual(props('offshoot_fork').sort(), [
      'at',
      'branch',
      'database',
      'ephemeral',
      'meta',
      'more_branches',
      'new_branch',
      'ttl',
    ]);
    assert.deepEqual(required('offshoot_fork').sort(), ['database', 'new_branch']);
    assert.deepEqual(props('offshoot_rollback').sort(), ['branch', 'database', 'to']);
    // if_head is ours, additive and optional: the earlier server's arguments are all still there.
    assert.deepEqual(props('offshoot_promote').sort(), ['database', 'force', 'if_head', 'source', 'target']);
    assert.deepEqual(required('offshoot_promote').sort(), ['database', 'source', 'target']);
    assert.deepEqual(required('offshoot_destroy').sort(), ['branch', 'database']);
    assert.deepEqual(props('offshoot_checkpoint').sort(), ['branch', 'database', 'meta', 'name']);
    assert.deepEqual(props('offshoot_query').sort(), ['at', 'branch', 'database', 'limit', 'sql']);
    assert.deepEqual(required('offshoot_query').sort(), ['database', 'sql']);
    const promoteProps = (tools.find((t) => t.name === 'offshoot_promote')?.inputSchema.properties ?? {}) as Record<
      string,
      { type?: string }
    >;
    const force = promoteProps.force;
    assert.equal(force?.type, 'boolean');
  });

  test('the offshoot-loop prompt states the six steps and the rules', async () => {
    const { prompts } = await m.client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'offshoot-loop'));
    const p = await m.client.getPrompt({ name: 'offshoot-loop' });
    const text = p.messages.map((x) => (x.content.type === 'text' ? x.content.text : '')).join('\n');
    for (const step of ['1. Look', '2. Fork', '3. Work', '4. Checkpoint', '5. Compare', '6. Promote'])
      assert.ok(text.includes(step), `the prompt has "${step}"`);
    assert.match(text, /do not retry with force/);
  });

  test('more_branches forks them all at one point, or none when one name is taken', async () => {
    const r = ok(
      await m.call('offshoot_fork', { database: 'app', new_branch: 'try-1', more_branches: ['try-2', 'try-3'] }),
    );
    assert.deepEqual(r.branches, ['try-1', 'try-2', 'try-3']);
    const list = ok(await m.call('offshoot_list', { database: 'app' })).branches as Array<{
      branch: string;
      txid: number;
    }>;
    const made = list.filter((b) => b.branch.startsWith('try-'));
    assert.deepEqual(made.map((b) => b.branch).sort(), ['try-1', 'try-2', 'try-3']);
    assert.ok(
      made.every((b) => b.txid === r.txid),
      'one fork point',
    );
    refused(
      await m.call('offshoot_fork', { database: 'app', new_branch: 'try-4', more_branches: ['try-2'] }),
      'ALREADY_EXISTS',
    );
    const after = ok(await m.call('offshoot_list', { database: 'app' })).branches as Array<{ branch: string }>;
    assert.ok(!after.some((b) => b.branch === 'try-4'), 'nothing was forked');
    const flood = Array.from({ length: 1000 }, (_, i) => `flood-${i}`);
    const tooMany = await m.call('offshoot_fork', { database: 'app', new_branch: 'flood', more_branches: flood });
    assert.equal(tooMany.isError, true);
    assert.match(tooMany.text, /Input validation error/);
    const still = ok(await m.call('offshoot_list', { database: 'app' })).branches as Array<{ branch: string }>;
    assert.ok(!still.some((b) => b.branch.startsWith('flood')), 'nothing was forked');
  });

  test('meta on fork and checkpoint is stored and shown by list, status and --json', async () => {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'tagged', meta: { run: 'r1', agent: 'bot' } }));
    const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'tagged' })).path as string;
    s.sqlite(path, "INSERT INTO t(v) VALUES ('d');");
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'tagged', name: 'cp1', meta: { sha: 'abc' } }));
    const list = ok(await m.call('offshoot_list', { database: 'app' })).branches as Array<Record<string, unknown>>;
    const b = list.find((x) => x.branch === 'tagged') as {
      meta: unknown;
      checkpoints: Array<{ name: string; meta?: unknown }>;
    };
    assert.deepEqual(b.meta, { run: 'r1', agent: 'bot' });
    assert.deepEqual(b.checkpoints.find((c) => c.name === 'cp1')?.meta, { sha: 'abc' });
    assert.match(s.cli(['status', 'app']).stdout, /app@tagged .*meta=\{"run":"r1","agent":"bot"\}/);
    const json = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as { branches: Array<Record<string, unknown>> };
    const jb = json.branches.find((x) => x.branch === 'tagged') as { meta: unknown };
    assert.deepEqual(jb.meta, { run: 'r1', agent: 'bot' });
    const tooMany = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']));
    refused(
      await m.call('offshoot_fork', { database: 'app', new_branch: 'many', meta: tooMany }),
      'INVALID_ARGUMENT',
      /at most 32/,
    );
  });

  test('meta keys named like Object members (__proto__, constructor) are kept, as the CLI keeps them', async () => {
    const meta = JSON.parse('{"__proto__":"p","constructor":"c","run":"r2"}') as Record<string, string>;
    assert.ok(Object.hasOwn(meta, '__proto__'));
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'proto', meta }));
    const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'proto' })).path as string;
    s.sqlite(path, "INSERT INTO t(v) VALUES ('p');");
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'proto', name: 'cp', meta }));
    const want = '{"__proto__":"p","constructor":"c","run":"r2"}';
    const json = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as { branches: Array<Record<string, unknown>> };
    const b = json.branches.find((x) => x.branch === 'proto') as {
      meta: unknown;
      checkpoints_v2: Array<{ name: string; meta?: unknown }>;
    };
    assert.equal(JSON.stringify(b.meta), want, 'the fork kept every key');
    assert.equal(JSON.stringify(b.checkpoints_v2.find((c) => c.name === 'cp')?.meta), want, 'so did the checkpoint');
    const list = ok(await m.call('offshoot_list', { database: 'app' })).branches as Array<Record<string, unknown>>;
    assert.equal(JSON.stringify(list.find((x) => x.branch === 'proto')?.meta), want, 'and offshoot_list shows them');
    const bad = JSON.parse('{"__proto__":{"nested":"object"}}') as Record<string, string>;
    const refusedBad = await m.call('offshoot_fork', { database: 'app', new_branch: 'proto-bad', meta: bad });
    assert.equal(refusedBad.isError, true, 'a __proto__ value is checked like any other');
  });

  test('bad input is a clear tool error and the server keeps serving', async () => {
    // An unknown tool is the protocol's invalid-params error, as the spec has it; the rest are tool results.
    await assert.rejects(m.client.callTool({ name: 'offshoot_nope', arguments: {} }), /offshoot_nope not found/);
    const wrongType = await m.call('offshoot_fork', { database: 'app', new_branch: 42 });
    assert.equal(wrongType.isError, true);
    assert.match(wrongType.text, /Input validation error/);
    refused(
      await m.call('offshoot_fork', { database: 'app', new_branch: 'Bad Name' }),
      'INVALID_NAME',
      /invalid new_branch "Bad Name"/,
    );
    refused(await m.call('offshoot_checkout', { database: '../etc' }), 'INVALID_NAME', /invalid database/);
    refused(await m.call('offshoot_checkout', { database: 'nosuch' }), 'NOT_FOUND');
    refused(
      await m.call('offshoot_fork', { database: 'app', new_branch: 'x', ttl: '-5m' }),
      'INVALID_ARGUMENT',
      /must be positive/,
    );
    refused(await m.call('offshoot_fork', { database: 'app', new_branch: 'x', ttl: 'soon' }), 'INVALID_ARGUMENT');
    assert.equal(ok(await m.call('offshoot_list')).daemon, null);
  });
});

test('offshoot mcp on a store that does not exist yet: tools fail with the fix named, and work once it is created', async () => {
  const s = makeMcpStore(false);
  const missing = `${s.dir}/not-yet`;
  const m = await startMcp(missing);
  try {
    const r = await m.call('offshoot_list');
    assert.equal(r.isError, true);
    assert.equal(r.code, 'NOT_INITIALIZED');
    assert.match(r.text, /offshoot -store \S+ init/);
    assert.equal(spawnSync(offshootBin, ['-store', missing, 'init']).status, 0);
    assert.deepEqual(ok(await m.call('offshoot_list')).branches, []);
    assert.match((await m.call('offshoot_list')).text, /offshoot create/);
  } finally {
    await m.close();
    s.cleanup();
  }
});

test('the store resolves from -store, then OFFSHOOT_STORE, then ./.offshoot', async () => {
  const s = makeMcpStore();
  const proj = join(s.dir, 'proj');
  mkdirSync(proj);
  assert.equal(spawnSync(offshootBin, ['-store', join(proj, '.offshoot'), 'init']).status, 0);
  const names = async (m: McpSession) =>
    (ok(await m.call('offshoot_list')).branches as Array<{ db: string }>).map((b) => b.db);
  const fromEnv = await startMcp('', [], { args: ['mcp'], cwd: proj, env: { OFFSHOOT_STORE: s.store } });
  const fromCwd = await startMcp('', [], { args: ['mcp'], cwd: proj });
  const fromFlag = await startMcp('', [], {
    args: ['-store', s.store, 'mcp'],
    cwd: proj,
    env: { OFFSHOOT_STORE: join(proj, '.offshoot') },
  });
  try {
    assert.deepEqual(await names(fromEnv), ['app']);
    assert.deepEqual(await names(fromCwd), []);
    assert.deepEqual(await names(fromFlag), ['app']);
  } finally {
    await Promise.all([fromEnv.close(), fromCwd.close(), fromFlag.close()]);
    s.cleanup();
  }
});
