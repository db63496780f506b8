// docs/integrations/ai-sdk.md starts with a quickstart: at most 10 lines, run here exactly as written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect } from '@offshoot/client';
import { startDaemon } from '@offshoot/client/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

test('the AI SDK page quickstart runs as written: the model forks app through offshoot_fork', async () => {
  const page = readFileSync(join(ROOT, 'docs/integrations/ai-sdk.md'), 'utf8');
  const block = /^# .+\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
  assert.ok(block.trim().split('\n').length <= 10, `the quickstart is ${block.trim().split('\n').length} lines`);
  process.env['OFFSHOOT_BIN'] = join(ROOT, 'offshoot');
  const daemon = await startDaemon();
  const client = await connect(daemon.sock);
  // Inside the repository, so its packages resolve as an installed application's would.
  const dir = join(ROOT, '.tmp', `quickstart-ai-sdk-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    await client.create('app');
    writeFileSync(join(dir, 'agent.mts'), block);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'agent.mts'], {
      cwd: dir,
      env: { ...process.env, OFFSHOOT_SOCKET: daemon.sock },
    });
    assert.equal(stdout, 'forked app@try-1\n');
    const fork = (await client.branches('app')).find((b) => b.branch === 'try-1');
    assert.equal(fork?.ttl, '24h0m0s');
  } finally {
    client.close();
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
