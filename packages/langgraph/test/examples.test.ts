import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { OFFSHOOT_BIN } from './daemon-fixture.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function runExample(name: string): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, OFFSHOOT_BIN };
  delete env['OFFSHOOT_SOCKET'];
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}/main.ts`], { cwd: ROOT, env });
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  child.stderr.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out })));
}

test('examples/langgraph-eval-ts: seed, fork per attempt, run the graph, keep the winner, losers expire', async () => {
  const { code, out } = await runExample('langgraph-eval-ts');
  assert.equal(code, 0, out);
  assert.match(out, /winner: attempt-think; main: answer=42/);
  assert.match(out, /expired and reaped: attempt-echo/);
  assert.match(out, /expired and reaped: attempt-guess/);
});

test('examples/agent-migration: the risky migration is rolled back, the safe one promoted', async () => {
  const { code, out } = await runExample('agent-migration');
  assert.equal(code, 0, out);
  assert.match(out, /drop-total: rolled back to before-migration/);
  assert.match(out, /add-currency: promoted onto main/);
  assert.match(out, /main: orders\(id,customer,total,currency\)/);
});
