import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('examples/mastra-workflow: a suspended run forked and resumed both ways; the approved outcome promoted', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, OFFSHOOT_BIN: `${ROOT}offshoot`, MASTRA_TELEMETRY_DISABLED: '1' };
  delete env['OFFSHOOT_SOCKET'];
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/mastra-workflow/main.ts'], { cwd: ROOT, env });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
  const code = await new Promise((resolve) => child.once('close', resolve));
  assert.equal(code, 0, out);
  assert.match(out, /^run-1: suspended$/m);
  assert.match(out, /^run-1-approve: success \{"orderId":7,"refunded":120,"note":"approved"\}$/m);
  assert.match(out, /^run-1-reject: success \{"orderId":7,"refunded":0,"note":"rejected"\}$/m);
  assert.match(out, /^approve vs reject differ in: mastra_workflow_snapshot$/m);
  assert.match(out, /^main: run [0-9a-f]{8} is success$/m);
});
