// Packaging: `npm pack` of the offshoot package installs into an empty prefix and serves `offshoot mcp` there.
// npm reuses its cache (--prefer-offline); better-sqlite3's native build is the one step skipped by default (its
// compiled addon is copied from this checkout); OFFSHOOT_PACK_FULL_INSTALL=1 runs the install scripts too and
// also starts the server with `npx --package <tarball> offshoot mcp`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureBuilt, repoRoot } from '../e2e/cli-harness.js';
import { makeMcpStore, ok, startMcp } from './mcp-harness.js';

// npm pack stages the client under the package's node_modules (prepack) while it runs; packing a copy keeps that
// out of the checkout, where the tests running beside this one resolve @offshoot/client.
function packageCopy(tmp: string): string {
  const copy = join(tmp, 'packages');
  for (const [pkg, parts] of [
    ['offshoot', ['package.json', 'bin', 'dist', 'scripts']],
    ['client', ['package.json', 'dist']],
  ] as const) {
    for (const part of parts) cpSync(join(repoRoot, 'packages', pkg, part), join(copy, pkg, part), { recursive: true });
  }
  return join(copy, 'offshoot');
}

test('npm pack gives a tarball that installs on its own and runs offshoot mcp', async () => {
  ensureBuilt();
  assert.ok(existsSync(join(repoRoot, 'packages/client/dist/index.js')), 'the client is built (make build)');
  const tmp = mkdtempSync(join(tmpdir(), 'offshoot-pack-'));
  const pkgDir = packageCopy(tmp);
  const s = makeMcpStore();
  try {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], {
        cwd: pkgDir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as Array<{ filename: string; files: Array<{ path: string }>; bundled: string[] }>;
    const info = packed[0];
    assert.ok(info, 'npm pack reported its tarball');
    const files = info.files.map((f) => f.path);
    assert.ok(files.includes('dist/cli/main.js'));
    assert.ok(files.includes('node_modules/@offshoot/client/dist/index.js'), 'the client is bundled');
    assert.deepEqual(info.bundled, ['@offshoot/client']);
    assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'only the build ships');
    assert.equal(existsSync(join(pkgDir, 'node_modules')), false, 'postpack took the staged client out again');

    const prefix = join(tmp, 'prefix');
    mkdirSync(prefix);
    const full = process.env.OFFSHOOT_PACK_FULL_INSTALL === '1';
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        ...(full ? [] : ['--ignore-scripts']),
        join(tmp, info.filename),
      ],
      { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const installed = join(prefix, 'node_modules');
    if (!full) {
      const addon = 'better-sqlite3/build/Release/better_sqlite3.node';
      mkdirSync(join(installed, 'better-sqlite3/build/Release'), { recursive: true });
      copyFileSync(join(repoRoot, 'node_modules', addon), join(installed, addon));
    }
    assert.ok(readdirSync(installed).includes('offshoot'));
    const m = await startMcp(s.store, [], {
      command: join(installed, '.bin/offshoot'),
      args: ['-store', s.store, 'mcp'],
      cwd: tmp,
    });
    try {
      assert.equal((await m.client.listTools()).tools.length, 10);
      assert.equal(ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'packed' })).ttl, '24h0m0s');
      assert.deepEqual(
        ok(await m.call('offshoot_query', { database: 'app', branch: 'packed', sql: 'SELECT count(*) FROM t' })).rows,
        [[3]],
      );
    } finally {
      await m.close();
    }
    if (full) {
      // npx builds its own install (native addon included) in npm's cache, which takes longer than an MCP
      // initialize may: build it first, then start the server from it.
      const npx = ['--yes', '--prefer-offline', '--package', join(tmp, info.filename), 'offshoot'];
      execFileSync('npx', [...npx, 'version'], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'], timeout: 900_000 });
      const viaNpx = await startMcp(s.store, [], {
        command: 'npx',
        args: [...npx, '-store', s.store, 'mcp'],
        cwd: tmp,
      });
      try {
        assert.equal(ok(await viaNpx.call('offshoot_list', { database: 'app' })).daemon, null);
      } finally {
        await viaNpx.close();
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    s.cleanup();
  }
});
