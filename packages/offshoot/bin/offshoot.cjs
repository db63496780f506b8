#!/usr/bin/env node
'use strict';
// The offshoot command. It runs the one-file bundle (dist/cli.cjs, built by `make build`) through a V8 code cache
// kept next to it: vm.Script takes and produces V8 cached data, which spares resolving and compiling the bundle's
// modules on every start. A missing, stale or rejected cache only costs speed: the bundle compiles from source and
// this run writes a fresh cache on exit (silently skipped where dist/ is read-only).
// The cache starts with the build it was made from, named on the bundle's second line: V8 checks only that a cached
// script has the same length, so a rebuilt bundle of the same length would otherwise run the old build's functions.
// SQLite is Node's built-in node:sqlite, complete from 22.16: on an older Node every command stops here, in one line
// (the exit code of UNSUPPORTED).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 16)) {
  process.stderr.write(
    `offshoot: needs Node.js 22.16 or later (22, 24 or 26); this is ${process.version} (install a current Node.js LTS and run offshoot with it)\n`,
  );
  process.exit(8);
}
const fs = require('node:fs');
const path = require('node:path');
const { createRequire, wrap } = require('node:module');
const vm = require('node:vm');

const bundle = path.join(__dirname, '..', 'dist', 'cli.cjs');
const cachePath = `${bundle}.v8-cache`;
let source;
try {
  source = fs.readFileSync(bundle, 'latin1');
} catch {
  process.stderr.write(`offshoot: not built yet; run 'make build' (missing ${bundle})\n`);
  process.exit(1);
}
// Read as latin1, which is exact for a bundle its build line calls ASCII; any other is decoded again as UTF-8.
const build = /^\/\/ offshoot build ([0-9a-f]+)( ascii)?$/m.exec(source.slice(0, 512));
if (build?.[2] === undefined) source = Buffer.from(source, 'latin1').toString('utf8');
const header = build === null ? undefined : Buffer.from(`offshoot-v8-cache ${build[1]}\n`, 'latin1');
let cachedData;
if (header !== undefined) {
  try {
    const cache = fs.readFileSync(cachePath);
    if (cache.subarray(0, header.length).equals(header)) cachedData = cache.subarray(header.length);
  } catch {
    cachedData = undefined;
  }
}
const script = new vm.Script(wrap(source.startsWith('#!') ? `//${source}` : source), { filename: bundle, cachedData });
if (header !== undefined && (cachedData === undefined || script.cachedDataRejected)) {
  process.once('exit', () => {
    const tmp = `${cachePath}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, Buffer.concat([header, script.createCachedData()]));
      fs.renameSync(tmp, cachePath);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  });
}
const mod = { exports: {} };
script.runInThisContext()(mod.exports, createRequire(bundle), mod, bundle, path.dirname(bundle));
