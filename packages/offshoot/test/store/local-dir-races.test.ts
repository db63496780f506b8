import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { makeDurableDir } from '../../src/store/local/atomic-write.js';
import { sweepTemps } from '../../src/store/local/sweep-temps.js';

test('a directory a writer just made survives the sweep of abandoned temp files; one as old as they are goes', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'offshoot-sweep-'));
  try {
    const fresh = path.join(root, 'log', 'app', 'ep-1', '0123abcd');
    const old = path.join(root, 'data', 'orphan');
    mkdirSync(fresh, { recursive: true });
    mkdirSync(old, { recursive: true });
    const hourAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(old, hourAgo, hourAgo);
    // The sweep's cutoff is an hour back, as gc's: the writer's directory is younger than that, the orphan older.
    await sweepTemps(root, new Date(Date.now() - 3600_000), true);
    assert.ok(existsSync(fresh), 'the writer is about to create its temp file in it');
    assert.ok(!existsSync(old), 'an empty directory untouched for longer than any writer takes is pruned');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a writer makes its directory while another process prunes the emptied parents under it', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'offshoot-mkdir-'));
  try {
    const dir = path.join(root, 'log', 'app', 'ep', 'id');
    let stop = false;
    const chain = [
      path.join(root, 'log', 'app', 'ep', 'id'),
      path.join(root, 'log', 'app', 'ep'),
      path.join(root, 'log', 'app'),
    ];
    let pruned = 0;
    const pruner = (async () => {
      while (!stop) {
        for (const d of chain) {
          await rmdir(d).then(
            () => pruned++,
            () => undefined,
          );
        }
      }
    })();
    try {
      // Node's recursive mkdir alone fails with ENOENT in about one call in five under this race.
      for (let i = 0; i < 2000; i++) await makeDurableDir(dir);
    } finally {
      stop = true;
      await pruner;
    }
    assert.ok(pruned > 0, 'the pruner removed directories meanwhile');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
