// The code cache bin/offshoot.cjs keeps beside the bundle: reused while the bundle is the same build, never applied
// to another one. V8 itself checks only that a cached script has the same length as the source it is given.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, repoRoot } from '../support/built-cli.js';

let dir = '';
const pkg = join(repoRoot, 'packages/offshoot');

function version(): string {
  const r = spawnSync(process.execPath, [join(dir, 'bin/offshoot.cjs'), 'version'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'offshoot-code-cache-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist'));
  copyFileSync(join(pkg, 'bin/offshoot.cjs'), join(dir, 'bin/offshoot.cjs'));
  copyFileSync(join(pkg, 'dist/cli.cjs'), join(dir, 'dist/cli.cjs'));
  copyFileSync(join(pkg, 'package.json'), join(dir, 'package.json'));
});

after(() => rmSync(dir, { recursive: true, force: true }));

test('a run writes the cache, the next run of the same build keeps it', () => {
  const cache = join(dir, 'dist/cli.cjs.v8-cache');
  const first = version();
  const written = statSync(cache);
  assert.equal(version(), first);
  const kept = statSync(cache);
  assert.equal(kept.ino, written.ino, 'the cache was accepted, not rewritten');
  assert.equal(kept.mtimeMs, written.mtimeMs);
});

test('a rebuilt bundle of the same length runs its own code, not the cached build', () => {
  version();
  const bundle = join(dir, 'dist/cli.cjs');
  const source = readFileSync(bundle, 'utf8');
  const build = /^\/\/ offshoot build ([0-9a-f]+)( ascii)?$/m.exec(source)?.[1] ?? '';
  assert.ok(build.length > 0, 'the bundle names its build');
  // Another build: one word of the version line changed, the same length, a new build name.
  const rebuilt = source
    .replace(`offshoot build ${build}`, `offshoot build ${'0'.repeat(build.length)}`)
    .replace(/(`offshoot \$\{version\} )node(\$\{)/, '$1NODE$2');
  assert.equal(rebuilt.length, source.length);
  assert.notEqual(rebuilt, source);
  writeFileSync(bundle, rebuilt);
  assert.match(version(), / NODE\d/);
  assert.match(version(), / NODE\d/);
});

test('a bundle whose build line calls it ASCII is read as such; any other is read as UTF-8', () => {
  const bundle = join(dir, 'dist/cli.cjs');
  copyFileSync(join(pkg, 'dist/cli.cjs'), bundle);
  const source = readFileSync(bundle, 'utf8');
  assert.match(source.slice(0, 200), /^\/\/ offshoot build [0-9a-f]+ ascii$/m, 'the build names an ASCII bundle');
  assert.match(version(), / node\d/);
  // A build with a non-ASCII character in what it prints, its build line without the word.
  const utf8 = source
    .replace(/offshoot build [0-9a-f]+ ascii/, `offshoot build ${'1'.repeat(32)}`)
    .replace(/(`offshoot \$\{version\} )node(\$\{)/, '$1nöde$2');
  assert.notEqual(utf8, source);
  writeFileSync(bundle, utf8);
  assert.match(version(), / nöde\d/);
  assert.match(version(), / nöde\d/);
});
