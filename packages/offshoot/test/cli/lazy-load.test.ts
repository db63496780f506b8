// Start-up cost model of the bundled CLI: which npm packages a command loads. The lean commands must load none of
// the heavy ones (SQLite, native addons, the S3 SDK, zod, metrics, the MCP SDK), whatever the machine's speed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, repoRoot } from '../support/built-cli.js';

// node:net comes with the daemon client, which only the commands that talk to a daemon load.
const HEAVY = [
  'node:sqlite',
  'lz4-napi',
  '@aws-sdk/',
  'zod',
  'prom-client',
  '@modelcontextprotocol/',
  'hash-wasm',
  '@offshoot/client',
  'node:net',
];
const loader = join(repoRoot, 'packages/offshoot/bin/offshoot.cjs');
let dir = '';

// A preload that records every bare package name the process requires and writes the list out at exit.
const HOOK = `
const Module = require('node:module');
const seen = new Set();
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'node:net' || request === 'node:crypto' || (!request.startsWith('.') && !request.startsWith('/') && !request.startsWith('node:')))
    seen.add(request);
  return load.call(this, request, ...rest);
};
const builtin = process.getBuiltinModule;
process.getBuiltinModule = function (id) {
  seen.add(id);
  return builtin.call(process, id);
};
process.on('exit', () => require('node:fs').writeFileSync(process.env.LOAD_LOG, JSON.stringify([...seen])));
`;

function packagesLoaded(args: string[], mayFail = false): string[] {
  const log = join(dir, 'loaded.json');
  rmSync(log, { force: true });
  const r = spawnSync(
    process.execPath,
    ['--require', join(dir, 'hook.cjs'), loader, '-store', join(dir, 'store'), ...args],
    {
      cwd: dir,
      env: { ...process.env, LOAD_LOG: log, OFFSHOOT_STORE: '' },
      encoding: 'utf8',
    },
  );
  if (!mayFail) assert.equal(r.status, 0, `offshoot ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(readFileSync(log, 'utf8')) as string[];
}

function heavyIn(loaded: string[]): string[] {
  return loaded.filter((p) => HEAVY.some((h) => p === h || p.startsWith(h.endsWith('/') ? h : `${h}/`)));
}

before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'offshoot-lazy-'));
  writeFileSync(join(dir, 'hook.cjs'), HOOK);
  packagesLoaded(['init']);
});

after(() => rmSync(dir, { recursive: true, force: true }));

test('help, version, status and a fork of a clean branch load no heavy package', () => {
  const created = packagesLoaded(['create', 'app']);
  assert.ok(created.includes('node:sqlite'), 'create opens SQLite, so the hook sees the driver load');
  assert.ok(
    packagesLoaded(['session', 'dbs'], true).includes('node:net'),
    'a session command dials the daemon, so the hook sees node:net load',
  );
  for (const args of [['--help'], ['version'], ['status'], ['fork', 'app', 'child'], ['status', 'app']]) {
    assert.deepEqual(heavyIn(packagesLoaded(args)), [], `offshoot ${args.join(' ')}`);
  }
});

test('help, version and status load no node:crypto: a listing hashes nothing and names no temp file', () => {
  assert.ok(packagesLoaded(['fork', 'app', 'crypto-control']).includes('node:crypto'), 'a fork names temp files');
  for (const args of [['--help'], ['version'], ['status'], ['status', 'app'], ['status', 'app', '--json']]) {
    assert.ok(!packagesLoaded(args).includes('node:crypto'), `offshoot ${args.join(' ')}`);
  }
});
