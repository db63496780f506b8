// The engine's agent rules reached through the tools: an agent's force needs the human's allowForce, and the undo
// points of a protected branch stay the human's, over the daemon and at rest. The adapter implements none of this;
// it only says that an agent asks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Client, connect } from '@offshoot/client';
import { startDaemon, type TestDaemon } from '@offshoot/client/testkit';
import type { ToolSet } from 'ai';
import { offshootTools } from '../src/index.js';
import { answered, approvalOf, sql } from './host.js';
import { callOnce, run } from './scripted-model.js';

const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = BIN;

/** The human approves the one call; resolves with what the model was then told (a result, or the error text). */
async function approved(tools: ToolSet, tool: string, input: unknown): Promise<string> {
  const first = await callOnce(tools, tool, input);
  const r = await run(
    tools,
    [(last) => ({ text: JSON.stringify(last) })],
    answered(first.result, approvalOf(first.content), true),
  );
  return r.text;
}

/** The error text the model is told for a call that fails; fails when the call did not. */
async function refusal(tools: ToolSet, tool: string, input: unknown): Promise<string> {
  const { content } = await callOnce(tools, tool, input);
  const err = content.find((c) => c.type === 'tool-error') as { error: unknown } | undefined;
  assert.ok(err, `expected a tool-error, got ${JSON.stringify(content)}`);
  return String(err.error);
}

describe('the agent rules over the daemon', { timeout: 180_000 }, () => {
  let daemon: TestDaemon;
  let human: Client;

  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    human = await connect(daemon.sock);
    await human.create('app');
    const s = await human.open('app');
    sql(s.path, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
    await s.flush('one');
    await s.close();
    await human.fork('app', 'main', 'attempt');
  });
  after(async () => {
    human.close();
    await daemon.stop();
  });

  test("an agent's force onto protected main needs the human: their yes, or allowForce", async () => {
    const input = { database: 'app', source: 'attempt', target: 'main', force: true };
    const denied = await callOnce(offshootTools({ client: human }), 'offshoot_promote', input);
    await run(
      offshootTools({ client: human }),
      [{ text: 'no' }],
      answered(denied.result, approvalOf(denied.content), false),
    );
    assert.ok(!(await human.branches('app')).some((b) => b.branch === 'main-pre-promote'), 'main did not move');
    const allowed = await callOnce(offshootTools({ client: human, allowForce: true }), 'offshoot_promote', input);
    assert.deepEqual(
      allowed.content.map((c) => c.type),
      ['tool-result'],
      'allowed to force, the agent is not asked about',
    );
    assert.match(await approved(offshootTools({ client: human }), 'offshoot_promote', input), /"target":"main"/);
  });

  test('the undo point of protected main stays the human’s: destroyed only on their yes', async () => {
    await human.create('undo');
    await human.rollback('undo', 'main', 'init');
    const input = { database: 'undo', branch: 'main-pre-rollback', force: true };
    const first = await callOnce(offshootTools({ client: human }), 'offshoot_destroy', input);
    await run(
      offshootTools({ client: human }),
      [{ text: 'no' }],
      answered(first.result, approvalOf(first.content), false),
    );
    assert.ok((await human.branches('undo')).some((b) => b.branch === 'main-pre-rollback'));
    const unforced = await refusal(offshootTools({ client: human }), 'offshoot_destroy', { ...input, force: false });
    assert.match(unforced, /undo point of protected undo@main.*PROTECTED/, 'without force the human is not asked');
    await human.create('undo2');
    await human.rollback('undo2', 'main', 'init');
    assert.match(
      await approved(offshootTools({ client: human }), 'offshoot_destroy', { ...input, database: 'undo2' }),
      /"removed_checkout"/,
    );
    assert.ok(!(await human.branches('undo2')).some((b) => b.branch === 'main-pre-rollback'));
  });

  test('a checkout of the undo point of protected main is an agent’s, refused at rest and live', async () => {
    const tools = offshootTools({ client: human });
    const undo = { database: 'undo', branch: 'main-pre-rollback' };
    assert.match(await refusal(tools, 'offshoot_checkout', undo), /undo point of protected undo@main.*PROTECTED/);
    // The human opened a session there: its live path is as writable as a checkout.
    const s = await human.open('undo', 'main-pre-rollback');
    try {
      assert.match(await refusal(tools, 'offshoot_checkout', undo), /undo point of protected undo@main.*PROTECTED/);
    } finally {
      await s.close();
    }
  });

  test('an empty branch is invalid input, never main: the rollback neither runs nor skips the approval', async () => {
    await human.create('empty');
    const before = await human.branches('empty');
    const r = await callOnce(offshootTools({ client: human }), 'offshoot_rollback', {
      database: 'empty',
      branch: '',
      to: 'init',
    });
    assert.deepEqual(
      r.content.map((c) => c.type),
      ['tool-error'],
    );
    assert.deepEqual(await human.branches('empty'), before, 'main was not rolled back');
  });
});

describe('the agent rules at rest', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-policy-'));
  const store = join(dir, 'store');
  const human = (...args: string[]) => execFileSync(BIN, ['-store', store, ...args], { encoding: 'utf8' });

  before(() => {
    human('init');
    human('create', 'app');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a checkout of the undo point of protected main is an agent’s, refused', async () => {
    human('rollback', 'app', '--to', 'init');
    const told = await refusal(offshootTools({ store }), 'offshoot_checkout', {
      database: 'app',
      branch: 'main-pre-rollback',
    });
    assert.match(told, /undo point of protected app@main.*PROTECTED/);
  });

  test('an empty branch is invalid input, never main', async () => {
    const r = await callOnce(offshootTools({ store }), 'offshoot_rollback', {
      database: 'app',
      branch: '',
      to: 'init',
    });
    assert.deepEqual(
      r.content.map((c) => c.type),
      ['tool-error'],
    );
  });

  test("an agent's forced destroy of protected main waits for the human; denied, main stays", async () => {
    const input = { database: 'app', branch: 'main', force: true };
    const first = await callOnce(offshootTools({ store }), 'offshoot_destroy', input);
    await run(offshootTools({ store }), [{ text: 'no' }], answered(first.result, approvalOf(first.content), false));
    assert.match(human('status', 'app'), /app@main/);
  });
});
