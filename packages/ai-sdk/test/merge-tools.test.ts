// offshoot_merge as an AI SDK tool, at rest (one run of the real CLI, whose exit 9 for conflicts is an answer) and
// over a real daemon: conflicts come back as a result with nothing changed, prefer resolves them, and a forced
// merge into protected main waits for the human (a check of the call first).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect } from '@offshoot/client';
import { startDaemon } from '@offshoot/client/testkit';
import type { ToolSet } from 'ai';
import { offshootTools } from '../src/index.js';
import { answered, approvalOf, sql } from './host.js';
import { callOnce, run } from './scripted-model.js';

const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = BIN;

interface Merged {
  applied: boolean;
  resolved?: number;
  backup?: string;
  conflicts: Array<{ kind: string; key: Record<string, unknown> }>;
}

/** A store with main and two forks that changed the same row differently. */
function seeded(store: string, init: boolean): (...args: string[]) => string {
  const human = (...args: string[]) => execFileSync(BIN, ['-store', store, ...args], { encoding: 'utf8' });
  if (init) human('init');
  human('create', 'app');
  sql(
    human('checkout', 'app').trim(),
    "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'seed');",
  );
  human('fork', 'app', 'a', 'b');
  sql(
    human('checkout', 'app@a').trim(),
    "UPDATE notes SET body = 'a' WHERE id = 1; INSERT INTO notes VALUES (2, 'a2');",
  );
  sql(human('checkout', 'app@b').trim(), "UPDATE notes SET body = 'b' WHERE id = 1;");
  return human;
}

async function loop(tools: ToolSet, human: (...args: string[]) => string): Promise<void> {
  const held = await callOnce(tools, 'offshoot_merge', { database: 'app', source: 'a', target: 'b' });
  const r = (held.content[0] as { output: Merged }).output;
  assert.equal(r.applied, false);
  assert.deepEqual(
    r.conflicts.map((c) => [c.kind, c.key]),
    [['update/update', { id: 1 }]],
  );
  assert.equal(human('query', 'app@b', 'SELECT body FROM notes ORDER BY id'), 'body\n"b"\n', 'nothing changed');
  const resolved = await callOnce(tools, 'offshoot_merge', {
    database: 'app',
    source: 'a',
    target: 'b',
    prefer: 'target',
  });
  assert.equal((resolved.content[0] as { output: Merged }).output.applied, true);
  assert.equal(human('query', 'app@b', 'SELECT body FROM notes ORDER BY id'), 'body\n"b"\n"a2"\n');

  const input = { database: 'app', source: 'b', target: 'main', force: true };
  const first = await callOnce(tools, 'offshoot_merge', input);
  const id = approvalOf(first.content);
  assert.equal(human('query', 'app', 'SELECT count(*) FROM notes'), 'count(*)\n1\n', 'main waits for the human');
  const approved = await run(tools, [(last) => ({ text: JSON.stringify(last) })], answered(first.result, id, true));
  assert.match(approved.text, /"backup":"main-pre-merge"/);
  assert.equal(human('query', 'app', 'SELECT body FROM notes ORDER BY id'), 'body\n"b"\n"a2"\n');

  // `at` merges a checkpoint of the source, not its head.
  human('fork', 'app', 'p', 'q');
  sql(human('checkout', 'app@p').trim(), "INSERT INTO notes VALUES (30, 'p30');");
  human('checkpoint', 'app@p', 'first');
  sql(human('checkout', 'app@p').trim(), "INSERT INTO notes VALUES (31, 'p31');");
  const at = await callOnce(tools, 'offshoot_merge', { database: 'app', source: 'p', target: 'q', at: 'first' });
  assert.equal((at.content[0] as { output: Merged }).output.applied, true);
  assert.equal(human('query', 'app@q', 'SELECT id FROM notes WHERE id > 20'), 'id\n30\n', 'only the checkpoint');

  // resolved: the agent's own row for the conflict, as the conflict names it; the result is the merge's JSON.
  human('fork', 'app', 'r', 's');
  sql(human('checkout', 'app@r').trim(), "UPDATE notes SET body = 'r' WHERE id = 2;");
  sql(human('checkout', 'app@s').trim(), "UPDATE notes SET body = 's' WHERE id = 2;");
  const row = { table: 'notes', key: { id: 2 }, row: { id: 2, body: 'r+s' } };
  const mine = await callOnce(tools, 'offshoot_merge', { database: 'app', source: 'r', target: 's', resolved: [row] });
  const out = (mine.content[0] as { output: Merged & Record<string, unknown> }).output;
  assert.deepEqual([out.applied, out.resolved, 'warnings' in out], [true, 1, false], JSON.stringify(out));
  assert.deepEqual(Object.keys(out).sort(), [
    'applied',
    'backup',
    'base',
    'checkpoint',
    'conflicts',
    'db',
    'resolved',
    'source',
    'tables',
    'target',
    'txid',
  ]);
  assert.equal(human('query', 'app@s', 'SELECT body FROM notes WHERE id = 2'), 'body\n"r+s"\n');
}

describe('offshoot_merge through the AI SDK', { timeout: 180_000 }, () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('at rest: one CLI run each, conflicts an answer (exit 9), a forced merge into main asked first', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offshoot-ai-merge-'));
    dirs.push(dir);
    const store = join(dir, 'store');
    const human = seeded(store, true);
    await loop(offshootTools({ store, bin: BIN }), human);
  });

  test('over a daemon: the merge op, and the check op before the human is asked', async () => {
    const daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    const agent = await connect(daemon.sock);
    try {
      const human = seeded(daemon.store, false);
      await loop(offshootTools({ client: agent }), human);
    } finally {
      agent.close();
      await daemon.stop();
    }
  });
});
