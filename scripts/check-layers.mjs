#!/usr/bin/env node
// Fails when a module under packages/offshoot/src imports from a layer above it (docs/architecture.md).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'packages/offshoot/src');

// Each layer's allowed imports (the transitive closure of the arrows in docs/architecture.md).
const ALLOWED = {
  platform: [],
  core: [],
  ltx: ['platform', 'core'],
  store: ['platform', 'core'],
  sqlite: ['platform', 'core', 'ltx'],
  capture: ['platform', 'core', 'ltx', 'sqlite'],
  ops: ['platform', 'core', 'ltx', 'store', 'sqlite'],
  protocol: ['platform', 'core', 'client'],
  session: ['platform', 'core', 'ltx', 'store', 'sqlite', 'capture', 'ops', 'protocol'],
  daemon: ['platform', 'core', 'ltx', 'store', 'sqlite', 'capture', 'ops', 'session', 'protocol'],
  mcp: ['platform', 'core', 'ltx', 'store', 'sqlite', 'ops', 'protocol', 'client', 'tools'],
  // The dashboard's server: ops and below for every read, daemon pieces only to mount on `serve -ui` (docs/ui.md).
  ui: ['platform', 'core', 'ltx', 'store', 'sqlite', 'ops', 'protocol', 'daemon'],
  cli: [
    'platform',
    'core',
    'ltx',
    'store',
    'sqlite',
    'capture',
    'ops',
    'session',
    'protocol',
    'daemon',
    'mcp',
    'ui',
    'client',
    'tools',
  ],
};
const PACKAGES = { '@offshoot/client': 'client', '@offshoot/tools': 'tools' };

// The floor plan of ops/ (docs/architecture.md). Its front door is its top-level files: the verbs and the faces.
// Nothing outside ops imports ops/helpers/**. A face declares what ops shows outward (names it hands on from the
// helpers, or a port) and imports only helpers; a verb composes helpers and faces and never imports another verb;
// a helper imports only the helper folders at or below its own in HELPER_FLOORS, never a top-level file.
const FACES = ['ops/context.ts', 'ops/policy.ts', 'ops/branch-view.ts', 'ops/live-branch.ts'];
const HELPER_FLOORS = [
  'context',
  'layout',
  'query',
  'history',
  'branch',
  'lease',
  'chain',
  'checkout',
  'merge',
  'safety',
  'gc',
  'ephemeral',
];
const isTop = (r) => /^ops\/[^/]+\.ts$/.test(r);
const isFace = (r) => FACES.includes(r);
const helperFloor = (r) => HELPER_FLOORS.indexOf(r.split('/')[2]);
function checkOpsFloor(rel, targetRel, spec) {
  const target = targetRel.replace(/\.js$/, '.ts');
  if (isTop(rel) && isTop(target) && !isFace(target))
    problems.push(`${rel}: may not import the verb ${target} (${spec}); move what they share to ops/helpers/`);
  else if (isFace(rel) && isTop(target))
    problems.push(`${rel}: a face imports only helpers (${spec}); hand the name on from its helper`);
  if (!rel.startsWith('ops/helpers/')) return;
  if (isTop(target)) problems.push(`${rel}: a helper may not import the top of ops (${spec})`);
  else if (target.startsWith('ops/helpers/') && helperFloor(target) > helperFloor(rel))
    problems.push(
      `${rel}: helpers/${rel.split('/')[2]}/ may not import helpers/${target.split('/')[2]}/, a floor above it (${spec}); see HELPER_FLOORS`,
    );
}

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

const problems = [];
let files = 0;
for (const file of walk(src)) {
  files++;
  const rel = relative(src, file);
  const layer = rel.split('/')[0];
  if (!rel.includes('/')) continue; // the package entry point re-exports everything
  if (/^ops\/helpers\/[^/]+$/.test(rel)) problems.push(`${rel}: ops/helpers/ holds folders by concern only`);
  else if (rel.startsWith('ops/helpers/') && helperFloor(rel) < 0)
    problems.push(`${rel}: ops/helpers/${rel.split('/')[2]}/ has no floor in HELPER_FLOORS`);
  const allowed = ALLOWED[layer];
  if (!allowed) {
    problems.push(`${rel}: folder "${layer}" is not a known layer`);
    continue;
  }
  const text = readFileSync(file, 'utf8');
  const re = /(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(re)) {
    const spec = m[1] ?? m[2];
    let target;
    if (spec.startsWith('.')) {
      const abs = resolve(dirname(file), spec);
      const r = relative(src, abs);
      if (r.startsWith('..')) {
        problems.push(`${rel}: imports ${spec}, outside the package source`);
        continue;
      }
      target = r.split('/')[0];
      if (!r.includes('/')) target = '(entry)';
      if (target === 'ops' && layer !== 'ops' && r.startsWith('ops/helpers/'))
        problems.push(
          `${rel}: imports ${spec}; outside ops, only its top-level files (its verbs and faces) are imported`,
        );
    } else if (PACKAGES[spec] || Object.keys(PACKAGES).some((p) => spec.startsWith(p + '/'))) {
      target = PACKAGES[spec] ?? PACKAGES[Object.keys(PACKAGES).find((p) => spec.startsWith(p + '/'))];
    } else {
      continue;
    }
    if (target === layer) {
      if (layer === 'ops' && spec.startsWith('.'))
        checkOpsFloor(rel, relative(src, resolve(dirname(file), spec)), spec);
      continue;
    }
    if (!allowed.includes(target)) problems.push(`${rel}: layer "${layer}" may not import "${target}" (${spec})`);
  }
}
const clientSrc = join(root, 'packages/client/src');
for (const file of walk(clientSrc)) {
  files++;
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/from\s*['"]([^'"]+)['"]/g)) {
    const spec = m[1];
    if (!spec.startsWith('.') && !spec.startsWith('node:'))
      problems.push(`client/${relative(clientSrc, file)}: the client has no runtime dependencies, but imports ${spec}`);
  }
}
// The tool catalogue is declarations only: its own files and zod, never the engine, the client or a framework.
const toolsSrc = join(root, 'packages/tools/src');
for (const file of walk(toolsSrc)) {
  files++;
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/(?:from\s*|import\(\s*)['"]([^'"]+)['"]/g)) {
    const spec = m[1];
    const outside = spec.startsWith('.') && relative(toolsSrc, resolve(dirname(file), spec)).startsWith('..');
    if ((!spec.startsWith('.') && spec !== 'zod/v4') || outside)
      problems.push(
        `tools/${relative(toolsSrc, file)}: the catalogue imports only its own files and zod/v4, not ${spec}`,
      );
  }
}
// The SDK adapters talk to the daemon or run the CLI; none of them imports the engine.
for (const pkg of ['langgraph', 'ai-sdk', 'evalite']) {
  const pkgSrc = join(root, 'packages', pkg, 'src');
  for (const file of walk(pkgSrc)) {
    files++;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s*|import\(\s*)['"]([^'"]+)['"]/g)) {
      const spec = m[1];
      const engine = spec === 'offshoot' || spec.startsWith('offshoot/');
      const outside = spec.startsWith('.') && relative(pkgSrc, resolve(dirname(file), spec)).startsWith('..');
      if (engine || outside)
        problems.push(
          `${pkg}/${relative(pkgSrc, file)}: an SDK package may not import the engine or another package's files (${spec})`,
        );
    }
  }
}
// The page (packages/offshoot/web) talks to the server only over HTTP: it imports its own files, the graph-layout
// library, and the API's types (type-only, erased by the build) — never server code.
const webSrc = join(root, 'packages/offshoot/web');
const WEB_PACKAGES = ['@dagrejs/dagre'];
const API_TYPES = join(src, 'ui/api-types.ts');
for (const file of walk(webSrc)) {
  files++;
  const rel = `web/${relative(webSrc, file)}`;
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(
    /(?:^|\n)\s*(import|export)(\s+type)?[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
  )) {
    const spec = m[3] ?? m[4];
    const typeOnly = m[2] !== undefined;
    if (WEB_PACKAGES.includes(spec)) continue;
    if (!spec.startsWith('.')) {
      problems.push(`${rel}: the page may import only ${WEB_PACKAGES.join(', ')} from packages, not ${spec}`);
      continue;
    }
    const abs = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    if (!relative(webSrc, abs).startsWith('..')) continue;
    if (abs === API_TYPES && typeOnly) continue;
    problems.push(
      `${rel}: the page talks to the server only over HTTP; it may not import ${spec} (only \`import type\` from src/ui/api-types)`,
    );
  }
}
if (problems.length > 0) {
  console.error(`layer check: ${problems.length} violation(s)`);
  for (const p of problems) console.error('  ' + p);
  process.exit(1);
}
console.log(`layer check: ${files} files, imports point down only`);
