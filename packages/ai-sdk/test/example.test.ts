import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

test('examples/ai-sdk-agent: fork, migrate, checkpoint, diff; the promote waits for the human, then lands', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, OFFSHOOT_BIN: `${ROOT}offshoot` };
  delete env['OFFSHOOT_SOCKET'];
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/ai-sdk-agent/main.ts'], { cwd: ROOT, env });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
  const code = await new Promise((resolve) => child.once('close', resolve));
  assert.equal(code, 0, out);
  assert.match(out, /offshoot_checkpoint: .*"name":"migrated".*"kind":"segment"/);
  assert.match(out, /approval asked: offshoot_promote/);
  assert.match(out, /main before approval: id,total\n/);
  assert.match(out, /agent: promoted: .*"target":"main"/);
  assert.match(out, /main after: id,total,currency\n/);
});
