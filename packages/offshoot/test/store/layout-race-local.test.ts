// The manifest's compare-and-swap under two `offshoot upgrade`s at once, on the local backend (the S3 suite runs the
// same race on the S3 test server).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { LocalBackend } from '../../src/store/local/local-backend.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { assertUpgradeRace } from './layout-race.js';

test('two upgrades at once: one raises the layout, the other finds it raised', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const spec = parseStoreSpec(path.join(dir, 'store'));
    await (await Store.init(spec, { layout: 2 })).close();
    await assertUpgradeRace(spec, async () => new LocalBackend(path.join(dir, 'store')), path.join(dir, 'ctx'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
