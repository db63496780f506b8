// What a new user copies runs as written: the README's quickstart block verbatim in a fresh directory with
// `offshoot` on PATH, `make demo`'s script piped, and the root package installed and uninstalled by its own name.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { baseEnv, ensureBuilt, offshootBin, repoRoot } from './cli-harness.js';

function quickstartBlock(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.split('\n## Quickstart\n')[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block !== undefined, 'the README has a Quickstart sh block');
  return block;
}

describe('copied as written', { timeout: 300_000 }, () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'offshoot-'));
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'tmp'));
    symlinkSync(offshootBin, join(dir, 'bin', 'offshoot'));
    env = baseEnv({ PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}`, TMPDIR: join(dir, 'tmp') });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the README quickstart runs verbatim and ends where it says', () => {
    const work = join(dir, 'work');
    mkdirSync(work);
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', quickstartBlock()], { cwd: work, env, encoding: 'utf8' });
    assert.equal(r.status, 0, `the quickstart failed:\n${r.stdout}\n${r.stderr}`);
    const status = spawnSync('offshoot', ['status', '--json'], { cwd: work, env, encoding: 'utf8' });
    const names = (JSON.parse(status.stdout) as { branches: Array<{ db: string; branch: string }> }).branches.map(
      (b) => `${b.db}@${b.branch}`,
    );
    for (const want of ['app@main', 'legacy@main', 'app@main-pre-rollback']) assert.ok(names.includes(want), want);
    assert.match(quickstartBlock(), /--to promote\s+#.*checkpoint/, 'the rollback line says what "promote" names');
  });

  test('the demo prints no escape codes when piped', () => {
    const r = spawnSync(join(repoRoot, 'scripts/demo.sh'), [], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /demo done/);
    assert.ok(!(r.stdout + r.stderr).includes(String.fromCharCode(27)), 'no ESC byte in the output');
  });

  test('npm install -g . puts offshoot on PATH and npm uninstall -g offshoot removes it', () => {
    const prefix = join(dir, 'prefix');
    const npm = (args: string[]) =>
      spawnSync('npm', [...args, '--prefix', prefix, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
        cwd: repoRoot,
        env: { ...env, npm_config_cache: join(dir, 'npm-cache') },
        encoding: 'utf8',
      });
    const installed = npm(['install', '-g', '.']);
    assert.equal(installed.status, 0, installed.stderr);
    assert.ok(existsSync(join(prefix, 'bin', 'offshoot')), 'installed the offshoot command');
    const removed = npm(['uninstall', '-g', 'offshoot']);
    assert.equal(removed.status, 0, removed.stderr);
    assert.ok(!existsSync(join(prefix, 'bin', 'offshoot')), 'uninstall by name removed the command');
  });
});
