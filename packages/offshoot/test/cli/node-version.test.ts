// offshoot runs on Node 22.16 or later (its SQLite is Node's built-in node:sqlite): on an older Node every command
// stops at once with one line naming the Node it needs, not a stack trace or a half-run command.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, repoRoot } from '../support/built-cli.js';

const loader = join(repoRoot, 'packages/offshoot/bin/offshoot.cjs');
let dir = '';

before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'offshoot-node-version-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI with process.version(s) made to read as `version`. */
function runAs(version: string, args: string[]): ReturnType<typeof spawnSync> {
  const preload = join(dir, `as-${version}.cjs`);
  writeFileSync(
    preload,
    `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${version}' } });
Object.defineProperty(process, 'version', { value: 'v${version}' });`,
  );
  return spawnSync(process.execPath, ['--require', preload, loader, '-store', join(dir, 'store'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, OFFSHOOT_STORE: '' },
  });
}

test('on Node 20 or 22.15 every command refuses in one line naming the Node it needs', () => {
  for (const version of ['20.20.2', '22.15.0']) {
    for (const args of [['version'], ['status'], ['init']]) {
      const r = runAs(version, args);
      assert.equal(r.status, 8, `offshoot ${args.join(' ')} on ${version}: ${String(r.stderr)}`);
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr,
        `offshoot: needs Node.js 22.16 or later (22, 24 or 26); this is v${version} (install a current Node.js LTS and run offshoot with it)\n`,
      );
    }
  }
});

test('on 22.16 and later majors the version check lets every command through', () => {
  for (const version of ['22.16.0', '24.0.0', '26.12.1']) {
    const r = runAs(version, ['version']);
    assert.equal(r.status, 0, String(r.stderr));
    assert.match(String(r.stdout), /^offshoot \d+\.\d+\.\d+/);
  }
});
