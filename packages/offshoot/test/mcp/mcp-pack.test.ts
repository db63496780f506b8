// Packaging: `make pack` (scripts/pack.mjs) writes every npm workspace package as a tarball into one folder; they
// install outside the repository (a package's dependency on a sibling resolves to the sibling's tarball, never to
// the registry), the CLI's tarball serves `offshoot mcp`, and the npx form docs/mcp.md gives starts it with stdin a
// pipe, as a host does. npm reuses its cache (--prefer-offline); install scripts are skipped by default (the one
// that builds anything is better-sqlite3's, which LangGraph's stock saver brings: its compiled addon is copied from
// this checkout); OFFSHOOT_PACK_FULL_INSTALL=1 (make test-pack) runs them too and also starts the server through npx.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ensureBuilt, repoRoot } from '../e2e/cli-harness.js';
import { makeMcpStore, ok, startMcp } from './mcp-harness.js';

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  bundleDependencies?: string[];
}

const full = process.env.OFFSHOOT_PACK_FULL_INSTALL === '1';
const tarballName = (m: Manifest): string => `${m.name.replace(/^@/, '').replace('/', '-')}-${m.version}.tgz`;

/** The manifests of the workspace packages the root package.json names (a trailing /* read as every folder). */
function workspaceManifests(): Manifest[] {
  const { workspaces } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] };
  const dirs = workspaces.flatMap((w) =>
    w.endsWith('/*') ? readdirSync(join(repoRoot, w.slice(0, -2))).map((d) => join(w.slice(0, -2), d)) : [w],
  );
  return dirs
    .filter((d) => existsSync(join(repoRoot, d, 'package.json')))
    .map((d) => JSON.parse(readFileSync(join(repoRoot, d, 'package.json'), 'utf8')) as Manifest)
    .filter((m) => m.private !== true);
}

function npmInstall(prefix: string, specs: string[]): void {
  mkdirSync(prefix, { recursive: true });
  // evalite 0.19 asks for better-sqlite3 11, which does not build on Node 26: a project overrides it as this
  // workspace does (docs/integrations/evalite.md).
  writeFileSync(
    join(prefix, 'package.json'),
    JSON.stringify({ private: true, overrides: { evalite: { 'better-sqlite3': '12.11.1' } } }),
  );
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
      ...specs,
    ],
    { cwd: prefix, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (!full && existsSync(join(prefix, 'node_modules/better-sqlite3'))) {
    const addon = 'better-sqlite3/build/Release/better_sqlite3.node';
    mkdirSync(join(prefix, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
    copyFileSync(join(repoRoot, 'node_modules', addon), join(prefix, 'node_modules', addon));
  }
}

/** The manifest inside a tarball. */
function packedManifest(tgz: string): Manifest {
  return JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' })) as Manifest;
}

describe('make pack', { timeout: 1_200_000 }, () => {
  let tmp: string;
  let packs: string;
  const manifests = workspaceManifests();

  before(() => {
    ensureBuilt();
    assert.ok(existsSync(join(repoRoot, 'packages/client/dist/index.js')), 'the client is built (make build)');
    tmp = mkdtempSync(join(tmpdir(), 'offshoot-pack-'));
    packs = join(tmp, 'npm');
    execFileSync(process.execPath, [join(repoRoot, 'scripts/pack.mjs'), packs], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // All of them into one empty prefix, as `npm install ./dist/npm/*.tgz` in a project would.
    npmInstall(
      join(tmp, 'all'),
      readdirSync(packs).map((f) => join(packs, f)),
    );
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('packs every workspace package, a dependency on a sibling pointing at its tarball', () => {
    assert.ok(manifests.length >= 4, 'the CLI, the client, its earlier name and the LangGraph.js package at least');
    assert.deepEqual(readdirSync(packs).sort(), manifests.map(tarballName).sort());
    const names = new Set(manifests.map((m) => m.name));
    for (const m of manifests) {
      const packed = packedManifest(join(packs, tarballName(m)));
      const bundled = new Set(packed.bundleDependencies ?? []);
      for (const [dep, spec] of Object.entries(packed.dependencies ?? {})) {
        if (!names.has(dep) || bundled.has(dep)) continue;
        const sibling = manifests.find((x) => x.name === dep);
        assert.ok(sibling !== undefined);
        assert.equal(spec, `file:./${tarballName(sibling)}`, `${m.name} depends on ${dep} through its tarball`);
      }
    }
    const cli = execFileSync('tar', ['-tzf', join(packs, 'offshoot-0.3.0.tgz')], { encoding: 'utf8' }).split('\n');
    assert.ok(cli.includes('package/dist/cli/main.js'));
    assert.ok(cli.includes('package/node_modules/@offshoot/client/dist/index.js'), 'the CLI bundles the client');
    assert.ok(!cli.some((f) => f.startsWith('package/src/') || f.startsWith('package/test/')), 'only the build ships');
    assert.equal(
      existsSync(join(repoRoot, 'packages/offshoot/node_modules/@offshoot')),
      false,
      'the checkout is untouched',
    );
  });

  test('a package installs alone from the folder, its sibling taken from the tarball beside it', () => {
    const prefix = join(tmp, 'alone');
    npmInstall(prefix, [join(packs, 'offshoot-db-client-0.3.0.tgz')]);
    const lock = readFileSync(join(prefix, 'package-lock.json'), 'utf8');
    assert.match(lock, /"resolved": "file:[^"]*offshoot-client-0\.3\.0\.tgz"/);
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('@offshoot-db/client'); console.log(typeof m.connect);"],
      { cwd: prefix, encoding: 'utf8' },
    );
    assert.equal(out, 'function\n');
  });

  test('all of them install together into an empty prefix, and each one imports there', () => {
    const prefix = join(tmp, 'all');
    const entries = [...manifests.map((m) => m.name), '@offshoot/client/testkit'];
    for (const name of entries) {
      const out = execFileSync(
        process.execPath,
        ['--input-type=module', '-e', `const m = await import('${name}'); console.log(Object.keys(m).length > 0);`],
        { cwd: prefix, encoding: 'utf8' },
      );
      assert.equal(out, 'true\n', name);
    }
  });

  test("the CLI's tarball serves offshoot mcp, from its own install and through the npx form docs/mcp.md gives", async () => {
    const s = makeMcpStore();
    try {
      const installed = join(tmp, 'all', 'node_modules');
      assert.ok(readdirSync(installed).includes('offshoot'));
      const m = await startMcp(s.store, [], {
        command: join(installed, '.bin/offshoot'),
        args: ['-store', s.store, 'mcp'],
        cwd: tmp,
      });
      try {
        assert.ok((await m.client.listTools()).tools.length >= 10);
        assert.equal(ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'packed' })).ttl, '24h0m0s');
        assert.deepEqual(
          ok(await m.call('offshoot_query', { database: 'app', branch: 'packed', sql: 'SELECT count(*) FROM t' })).rows,
          [[3]],
        );
      } finally {
        await m.close();
      }

      const mcpDoc = readFileSync(join(repoRoot, 'docs/mcp.md'), 'utf8');
      const documented = /`(npx [^`]*offshoot mcp)`/.exec(mcpDoc)?.[1];
      assert.equal(documented, 'npx -y --package ./offshoot-0.3.0.tgz offshoot mcp', 'docs/mcp.md gives the -y form');
      if (!full) return;
      // As documented: the tarball in the host's working directory, the store from OFFSHOOT_STORE.
      const cwd = join(tmp, 'host');
      mkdirSync(cwd);
      copyFileSync(join(packs, 'offshoot-0.3.0.tgz'), join(cwd, 'offshoot-0.3.0.tgz'));
      const [, ...npxArgs] = documented.split(' ');
      // npx makes its own install in npm's cache, which may take longer than an MCP initialize may: make it first,
      // stdin not a terminal as under a host, then start the server from it.
      execFileSync('npx', [...npxArgs.slice(0, -1), 'version'], {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 900_000,
      });
      const viaNpx = await startMcp(s.store, [], {
        command: 'npx',
        args: npxArgs,
        cwd,
        env: { OFFSHOOT_STORE: s.store },
      });
      try {
        assert.equal(ok(await viaNpx.call('offshoot_list', { database: 'app' })).daemon, null);
      } finally {
        await viaNpx.close();
      }
    } finally {
      s.cleanup();
    }
  });
});
