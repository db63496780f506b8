// docs/integrations/mastra.md starts with a quickstart: at most 10 lines, run here exactly as written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect } from '@offshoot/client';
import { startDaemon } from '@offshoot/client/testkit';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test("the Mastra page quickstart runs as written: Mastra's storage lands on app@run-1, main untouched", async () => {
  const page = readFileSync(join(ROOT, 'docs/integrations/mastra.md'), 'utf8');
  const block = /^# .+\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
  assert.ok(block.trim().split('\n').length <= 10, `the quickstart is ${block.trim().split('\n').length} lines`);
  process.env['OFFSHOOT_BIN'] = join(ROOT, 'offshoot');
  const daemon = await startDaemon();
  const client = await connect(daemon.sock);
  const dir = join(ROOT, '.tmp', `quickstart-mastra-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    await client.create('app');
    writeFileSync(join(dir, 'run.mts'), block);
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'run.mts'], {
      cwd: dir,
      env: { ...process.env, OFFSHOOT_SOCKET: daemon.sock, MASTRA_TELEMETRY_DISABLED: '1' },
    });
    const tables = "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'mastra_workflow_snapshot'";
    assert.deepEqual((await client.query('app', 'run-1', tables, { at: 'ran' })).rows, [[1]]);
    assert.deepEqual((await client.query('app', 'main', tables)).rows, [[0]]);
    assert.deepEqual(await client.status(), [], 'the session was closed');
  } finally {
    client.close();
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
