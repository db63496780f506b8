// The engine is a library: the package's "main" is a real built module exporting the verbs, and a program can run
// the whole quickstart through it without the CLI or a daemon.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as engine from '../../src/index.js';
import { ensureBuilt } from '../support/built-cli.js';

const pkgDir = fileURLToPath(new URL('../../', import.meta.url));

test('"main" is the built entry point and exports the engine API', async () => {
  ensureBuilt();
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { main: string };
  assert.equal(pkg.main, 'dist/index.js');
  assert.ok(existsSync(join(pkgDir, 'src/index.ts')), 'the source of main exists');
  const built = (await import(pathToFileURL(join(pkgDir, pkg.main)).href)) as Record<string, unknown>;
  for (const name of ['Store', 'makeContext', 'create', 'checkout', 'checkpoint', 'fork', 'rollback', 'promote'])
    assert.equal(typeof built[name], 'function', `main exports ${name}`);
});

test('a program runs create, checkout, checkpoint, fork and status through the library', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-'));
  const spec = engine.parseStoreSpec(join(dir, 'store'));
  try {
    await engine.Store.init(spec);
    const store = await engine.Store.open(spec);
    const ctx = engine.makeContext(store, engine.checkoutRootFor(spec, {}), { warn: () => undefined });
    await engine.create(ctx, 'app');
    const main = engine.parseTarget('app');
    const co = await engine.checkout(ctx, main);
    execFileSync('sqlite3', [co.path, 'CREATE TABLE t(v); INSERT INTO t VALUES (1);']);
    await engine.checkpoint(ctx, main, 'seeded');
    const f = await engine.fork(ctx, main, 'attempt', { ttl: engine.parseTtl('1h') });
    assert.equal(f.branch, 'attempt');
    const report = await engine.status(ctx);
    assert.deepEqual(report.branches.map((b) => engine.formatTarget(b)).sort(), ['app@attempt', 'app@main']);
    await assert.rejects(engine.checkout(ctx, engine.parseTarget('app@nope')), (e) => engine.hasCode(e, 'NOT_FOUND'));
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
