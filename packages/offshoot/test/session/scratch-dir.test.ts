import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { makeSessionScratch, sessionScratchParent, sweepSessionScratch } from '../../src/session/scratch-dir.js';

describe('session scratch dirs', () => {
  let tmp: string;
  let root: string;
  beforeEach(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    root = path.join(tmp, 'store');
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('are made private, distinct, and under a hidden directory of the checkout root', async () => {
    const a = await makeSessionScratch(root);
    const b = await makeSessionScratch(root);
    assert.notEqual(a, b);
    for (const dir of [a, b]) {
      assert.equal(path.dirname(dir), sessionScratchParent(root));
      assert.match(path.basename(dir), /^session-/);
      assert.ok(statSync(dir).isDirectory());
      assert.equal(statSync(dir).mode & 0o777, 0o700);
    }
    assert.equal(path.relative(root, sessionScratchParent(root)).split(path.sep)[0], '.scratch');
    assert.deepEqual(readdirSync(root), ['.scratch'], 'nothing beside the hidden directory');
  });

  it('the sweep removes every leftover session dir with its contents and nothing else', async () => {
    const left = [await makeSessionScratch(root), await makeSessionScratch(root), await makeSessionScratch(root)];
    for (const dir of left) {
      mkdirSync(path.join(dir, 'capture', 'deep'), { recursive: true });
      writeFileSync(path.join(dir, 'capture', 'deep', 'wal-copy'), 'x'.repeat(1000));
      writeFileSync(path.join(dir, 'flush-7.ltx'), 'half a segment');
    }
    const parent = sessionScratchParent(root);
    writeFileSync(path.join(parent, 'not-a-session'), 'keep');
    mkdirSync(path.join(root, 'checkouts', 'app'), { recursive: true });
    writeFileSync(path.join(root, 'checkouts', 'app', 'main.db'), 'a checkout');

    assert.equal(await sweepSessionScratch(root), 3);
    for (const dir of left) assert.equal(existsSync(dir), false, `${dir} survived the sweep`);
    assert.deepEqual(readdirSync(parent), ['not-a-session']);
    assert.ok(existsSync(path.join(root, 'checkouts', 'app', 'main.db')), 'checkouts are never touched');
    assert.equal(await sweepSessionScratch(root), 0, 'a second sweep finds nothing');
  });

  it('the sweep of a root that never had a session is a no-op', async () => {
    assert.equal(await sweepSessionScratch(root), 0);
    assert.equal(existsSync(root), false, 'the sweep creates nothing');
  });
});
