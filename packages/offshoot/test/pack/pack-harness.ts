// What make test-pack's suites share: `make pack`'s output written into a temp folder, the pinned tools beside it
// (the pack environment's twine and uv, a pinned Node), a folder of wheels for installs with no index, and a shell line
// run in an empty directory with the environment that keeps it off the network for our packages.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { baseEnv, offshootBin, repoRoot } from '../e2e/cli-harness.js';

/** make test-pack sets it; make test skips these suites (they install whole frameworks into empty environments). */
export const fullInstall = process.env.OFFSHOOT_PACK_FULL_INSTALL === '1';
export const skipUnlessFull = fullInstall ? false : 'make test-pack runs it (OFFSHOOT_PACK_FULL_INSTALL=1)';

/** Where the docs write the folder `make pack` fills: replaced by the test's own folder in every line run. */
export const DOCS_DIST = '/path/to/dist';

/** One `make pack`'s output: npm/ (the tarballs) and python/ (the wheels and sdists). */
export interface Packed {
  dir: string;
  npm: string;
  python: string;
  /** Whether this suite packed it (and removes it): false for the folder make test-pack packed once for all. */
  owned: boolean;
}

/**
 * make pack's output for a suite: the folder make test-pack packs once for every suite (OFFSHOOT_PACKED_DIR), else
 * make pack's two halves run into a new temp folder.
 */
export function packAll(): Packed {
  const shared = process.env.OFFSHOOT_PACKED_DIR;
  if (shared !== undefined && shared !== '') {
    return { dir: shared, npm: join(shared, 'npm'), python: join(shared, 'python'), owned: false };
  }
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-packed-'));
  const packed = { dir, npm: join(dir, 'npm'), python: join(dir, 'python'), owned: true };
  execFileSync(process.execPath, [join(repoRoot, 'scripts/pack.mjs'), packed.npm], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  execFileSync(join(repoRoot, 'scripts/pack-python.sh'), [packed.python], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return packed;
}

/** Removes a suite's own pack; the shared one stays for the other suites. */
export function unpack(packed: Packed | undefined): void {
  if (packed?.owned === true) rmSync(packed.dir, { recursive: true, force: true });
}

/** The interpreter of .venv-py-pack/ (build, hatchling, twine and uv, pinned). */
export function packPython(): string {
  return execFileSync(join(repoRoot, 'scripts/python-env.sh'), ['pack'], { encoding: 'utf8' }).trim();
}

/** The folder of wheels for every pin of one constraints file (scripts/python-wheels.sh downloads it once). */
export function wheelFolder(env: 'main' | 'crewai'): string {
  return execFileSync(join(repoRoot, 'scripts/python-wheels.sh'), [env], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** The bin folder of the pinned Node `major` (scripts/node-env.sh): first on PATH, npm and npx run on it too. */
export function nodeDir(major: number): string {
  return execFileSync(join(repoRoot, 'scripts/node-env.sh'), [String(major)], { encoding: 'utf8' }).trim();
}

/**
 * A folder of prebuild-install's local prebuilds holding better-sqlite3 at the version an install line pins (its
 * `overrides`): the workspace's own build of it, packed as the prebuilt binary its GitHub release serves for this Node
 * and platform. A user's install downloads that binary; this machine reaches no GitHub, and without it the install
 * would compile better-sqlite3 from source for minutes.
 */
export function betterSqlitePrebuilds(parent: string, line: string): string {
  const pinned = /better-sqlite3=(\S+)/.exec(line)?.[1];
  const pkg = join(repoRoot, 'node_modules/better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  assert.equal(version, pinned, "the install line pins the workspace's better-sqlite3");
  const dir = join(parent, 'prebuilds');
  mkdirSync(dir, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(dir, name), '-C', pkg, 'build/Release/better_sqlite3.node']);
  return dir;
}

/**
 * A folder for PATH with nothing but `offshoot` (this checkout's CLI, as the pages ask for one on PATH) and the
 * pinned `uv`; it holds no python, so `python3` stays the machine's.
 */
export function toolsBin(parent: string): string {
  const bin = join(parent, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(offshootBin, join(bin, 'offshoot'));
  symlinkSync(join(dirname(packPython()), 'uv'), join(bin, 'uv'));
  return bin;
}

/**
 * The environment that keeps an install off the indexes: pip takes --no-index and the wheel folder as find-links
 * (they add to the line's own --find-links); uv reads a config file saying the same and works offline, with a cache
 * of its own so nothing comes from an earlier install; npm takes its packages from its cache (npm ci filled it)
 * and asks the registry only for a version list it has never cached.
 */
export function offIndexEnv(work: string, wheels: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const uvConfig = join(work, 'uv.toml');
  writeFileSync(uvConfig, `offline = true\nno-index = true\n\n[pip]\nfind-links = [${JSON.stringify(wheels)}]\n`);
  return baseEnv({
    PIP_NO_INDEX: '1',
    PIP_FIND_LINKS: wheels,
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    // Byte-compiling a framework's every module is most of an install's time, and nothing here needs it done ahead.
    PIP_NO_COMPILE: '1',
    UV_CONFIG_FILE: uvConfig,
    UV_CACHE_DIR: join(work, 'uv-cache'),
    UV_PYTHON_DOWNLOADS: 'never',
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...extra,
  });
}

/** Runs doc text in bash, in cwd, the docs' dist folder replaced by the packed one; fails with what it printed. */
export function runDocLine(code: string, packed: Packed, cwd: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync('bash', ['-e', '-c', code.replaceAll(DOCS_DIST, packed.dir)], {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 900_000,
  });
  assert.equal(r.status, 0, `${code}\nexited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
