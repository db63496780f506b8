#!/usr/bin/env node
// `make pack`: every npm workspace package as a tarball in one folder (default dist/npm), installable outside the
// repository with `npm install ./dist/npm/*.tgz`. A dependency on another workspace package becomes a `file:` spec
// naming its sibling tarball (npm resolves it beside the tarball that declares it), so nothing is fetched from the
// registry under our names; a dependency the package bundles (the CLI bundles @offshoot/client) stays as it is.
// Each package is packed from a staged copy, so the checkout's own package.json files are never edited.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const out = resolve(process.argv[2] ?? join(root, 'dist/npm'));

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

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// The staged copies keep the repository's layout, so a prepack script that reaches a sibling package finds it.
const stage = mkdtempSync(join(tmpdir(), 'offshoot-pack-'));
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
    const m = structuredClone(p.manifest);
    const bundled = new Set(m.bundleDependencies ?? m.bundledDependencies ?? []);
    for (const field of ['dependencies', 'optionalDependencies']) {
      for (const dep of Object.keys(m[field] ?? {})) {
        const sibling = byName.get(dep);
        if (sibling === undefined || bundled.has(dep)) continue;
        m[field][dep] = `file:./${tarballName(dep, sibling.manifest.version)}`;
      }
    }
    const copy = join(stage, relative(root, p.dir));
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
