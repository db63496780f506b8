// A fork the tools made is promoted onto its base only while the base is still at the head it was forked at: two
// attempts forked from one head, the first promote lands, the second reaches the model as BASE_MOVED and moves
// nothing; over the daemon and at rest, driven through the real AI SDK by its offline test model.
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

/** What one tool call returned. */
async function output(tools: ToolSet, tool: string, input: unknown): Promise<Record<string, unknown>> {
  const r = await callOnce(tools, tool, input);
  return r.result.steps[0]?.toolResults[0]?.output as Record<string, unknown>;
}

/**
 * Forks two attempts from main's head through the tools, each writing a row and checkpointing it, then promotes them
 * in turn onto protected main with force (the check of each call says it needs the human, who approves it).
 */
async function twoAttempts(tools: ToolSet): Promise<{ first: string; second: string }> {
  for (const name of ['attempt-a', 'attempt-b']) {
    await output(tools, 'offshoot_fork', { database: 'app', new_branch: name, ttl: '1h' });
    const { path } = await output(tools, 'offshoot_checkout', { database: 'app', branch: name });
    sql(path as string, `CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES ('${name}');`);
    await output(tools, 'offshoot_checkpoint', { database: 'app', branch: name, name: 'done' });
  }
  const promote = (source: string) =>
    approved(tools, 'offshoot_promote', { database: 'app', source, target: 'main', force: true });
  return { first: await promote('attempt-a'), second: await promote('attempt-b') };
}

describe('promote of a fork the tools made, over the daemon', { timeout: 180_000 }, () => {
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
  });
  after(async () => {
    human.close();
    await daemon.stop();
  });

  test('the first lands; the second is told BASE_MOVED and main keeps the first', async () => {
    const head = (await human.branches('app')).find((b) => b.branch === 'main')?.head_txid;
    const { first, second } = await twoAttempts(offshootTools({ client: human }));
    assert.match(first, new RegExp(`"if_head":${head}`));
    assert.match(second, /BASE_MOVED/);
    assert.match(second, new RegExp(`app@main moved since txid ${head}`));
    const main = (await human.branches('app')).find((b) => b.branch === 'main');
    assert.equal(main?.head_txid, JSON.parse(first).txid, 'main holds what the first promote put there');
    assert.ok(
      (await human.branches('app')).some((b) => b.branch === 'attempt-b'),
      'the second attempt is kept',
    );
  });
});

describe('promote of a fork the tools made, at rest', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-ifhead-'));
  const store = join(dir, 'store');
  const human = (...args: string[]) => execFileSync(BIN, ['-store', store, ...args], { encoding: 'utf8' });

  before(() => {
    human('init');
    human('create', 'app');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the first lands; the second is told BASE_MOVED', async () => {
    const { first, second } = await twoAttempts(offshootTools({ store }));
    assert.match(first, /"if_head":1,|"if_head":1}/);
    assert.match(second, /BASE_MOVED/);
    assert.match(human('status', 'app'), /app@attempt-b /);
  });
});
