// Staging dirs live under the checkout root and the leftovers of a killed process of this host are swept.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { scratchDir } from '../../src/ops/helpers/context/paths.js';
import { withTempDir } from '../../src/ops/helpers/context/temp-dir.js';
import { processSpace } from '../../src/platform/process-space.js';
import { openTestStore, type TestStore } from './harness.js';

let ts: TestStore;
let parent: string;

before(async () => {
  ts = await openTestStore();
  parent = scratchDir(ts.ctx.checkoutRoot, 'tmp');
});

after(() => ts.cleanup());

/** The pid of a process that has already exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync('true');
  assert.equal(r.status, 0);
  return r.pid as number;
}

test('a staging dir is made under the checkout root, named for its owner, and removed afterwards', async () => {
  let seen = '';
  const out = await withTempDir(ts.ctx, async (dir) => {
    seen = dir;
    assert.equal(dirname(dir), parent);
    assert.ok(dir.startsWith(join(parent, `${process.pid}+${processSpace()}+`)), dir);
    assert.ok(existsSync(dir));
    return 42;
  });
  assert.equal(out, 42);
  assert.equal(existsSync(seen), false);
  await assert.rejects(
    withTempDir(ts.ctx, async (dir) => {
      seen = dir;
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(existsSync(seen), false, 'removed after a failure too');
});

test("the next staging dir sweeps a dead local owner's leftovers, never a live, remote or other-namespace owner's", async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const names = {
      dead: `${deadPid()}+${processSpace()}+abc123`,
      live: `${String(child.pid)}+${processSpace()}+def456`,
      remote: `${deadPid()}+another-host.example:1+ghi789`,
      otherNamespace: `${deadPid()}+${processSpace()}0+jkl012`,
      foreign: 'not-ours',
    };
    for (const n of Object.values(names)) mkdirSync(join(parent, n, 'inner'), { recursive: true });
    await withTempDir(ts.ctx, async () => undefined);
    assert.deepEqual(
      readdirSync(parent).sort(),
      [names.foreign, names.live, names.remote, names.otherNamespace].sort(),
    );
  } finally {
    child.kill();
  }
});
