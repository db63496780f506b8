#!/usr/bin/env node
// `make pack`: every npm workspace package as a tarball in one folder (default dist/npm), installable outside the
// repository with `npm install ./dist/npm/*.tgz`. A dependency on another workspace package becomes a `file:` spec
// naming its sibling tarball (npm resolves it beside the tarball that declares it), so nothing is fetched from the
// registry under our names; a dependency the package bundles (the CLI bundles @offshoot/client) stays as it is.
// Each package is packed from a staged copy, so the checkout's own package.json files are never edited.
//
// `node scripts/pack.mjs --publish-dry-run` publishes nothing and packs nothing: it runs `npm publish --dry-run --json`
// on each staged copy with its manifest as it is (registry dependencies, as a publish would send them) and prints
// one JSON object, per package name the files npm would publish and the warnings it gave (make test-pack checks it).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2);
const publishDryRun = args.includes('--publish-dry-run');
const out = resolve(args.find((a) => !a.startsWith('--')) ?? join(root, 'dist/npm'));

/** The workspace folders the root package.json names, with a trailing `/*` read as every folder under it. */
function workspaceDirs() {
  const { workspaces = [] } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return workspaces.flatMap((w) => {
    if (!w.endsWith('/*')) return [join(root, w)];
    const parent = join(root, w.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(parent, e.name));
  });
}

/** The file name `npm pack` gives a package: `@scope/name` 1.2.3 → `scope-name-1.2.3.tgz`. */
function tarballName(name, version) {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

const packages = workspaceDirs()
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter((p) => p.manifest.private !== true);
const byName = new Map(packages.map((p) => [p.manifest.name, p]));

if (!publishDryRun) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
}
// The staged copies keep the repository's layout, so a prepack script that reaches a sibling package finds it.
const stage = mkdtempSync(join(tmpdir(), 'offshoot-pack-'));
const report = {};
try {
  for (const p of packages) {
    // What npm pack takes (package.json, the `files` entries, README and LICENSE) and the pack scripts.
    const parts = ['package.json', 'README.md', 'LICENSE', 'scripts', ...(p.manifest.files ?? [])];
    for (const part of parts) {
      const from = join(p.dir, part);
      if (existsSync(from)) cpSync(from, join(stage, relative(root, p.dir), part), { recursive: true });
    }
  }
  for (const p of packages) {
    const copy = join(stage, relative(root, p.dir));
    if (publishDryRun) {
      const r = spawnSync('npm', ['publish', '--dry-run', '--json'], { cwd: copy, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`npm publish --dry-run of ${p.manifest.name} failed:\n${r.stderr}`);
      const { files } = JSON.parse(r.stdout)[p.manifest.name];
      const warnings = r.stderr.split('\n').filter((l) => l.startsWith('npm warn'));
      report[p.manifest.name] = { files: files.map((f) => f.path), warnings };
      continue;
    }
    const m = structuredClone(p.manifest);
    const bundled = new Set(m.bundleDependencies ?? m.bundledDependencies ?? []);
    for (const field of ['dependencies', 'optionalDependencies']) {
      for (const dep of Object.keys(m[field] ?? {})) {
        const sibling = byName.get(dep);
        if (sibling === undefined || bundled.has(dep)) continue;
        m[field][dep] = `file:./${tarballName(dep, sibling.manifest.version)}`;
      }
    }
    writeFileSync(join(copy, 'package.json'), `${JSON.stringify(m, null, 2)}\n`);
    execFileSync('npm', ['pack', '--pack-destination', out, '--loglevel=error'], {
      cwd: copy,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const file = tarballName(m.name, m.version);
    if (!existsSync(join(out, file))) throw new Error(`npm pack of ${m.name} made no ${file}`);
    console.log(relative(process.cwd(), join(out, file)));
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
if (publishDryRun) console.log(JSON.stringify(report, null, 2));
