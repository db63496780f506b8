#!/usr/bin/env node
'use strict';
// The offshoot command. It runs the one-file bundle (dist/cli.cjs, built by `make build`) through a V8 code cache
// kept next to it: Node 20 has no module.enableCompileCache (22.1+), but vm.Script takes and produces V8 cached
// data, which spares compiling the bundle on every start. A missing, stale or rejected cache only costs speed: the
// bundle compiles from source and this run writes a fresh cache on exit (silently skipped where dist/ is read-only).
const fs = require('node:fs');
const path = require('node:path');
const { createRequire, wrap } = require('node:module');
const vm = require('node:vm');

const bundle = path.join(__dirname, '..', 'dist', 'cli.cjs');
const cachePath = `${bundle}.v8-cache`;
let source;
try {
  source = fs.readFileSync(bundle, 'utf8');
} catch {
  process.stderr.write(`offshoot: not built yet; run 'make build' (missing ${bundle})\n`);
  process.exit(1);
}
let cachedData;
try {
  cachedData = fs.readFileSync(cachePath);
} catch {
  cachedData = undefined;
}
const script = new vm.Script(wrap(source.startsWith('#!') ? `//${source}` : source), { filename: bundle, cachedData });
if (cachedData === undefined || script.cachedDataRejected) {
  process.once('exit', () => {
    const tmp = `${cachePath}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cachePath);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  });
}
const mod = { exports: {} };
script.runInThisContext()(mod.exports, createRequire(bundle), mod, bundle, path.dirname(bundle));
