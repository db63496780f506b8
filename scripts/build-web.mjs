#!/usr/bin/env node
// Bundles the dashboard page (packages/offshoot/web) into packages/offshoot/dist/web with esbuild: one script, one
// stylesheet and the HTML shell, everything inside the package (no CDN, nothing fetched at run time).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'packages/offshoot/web');
const out = join(root, 'packages/offshoot/dist/web');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(web, 'src/main.ts')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
await build({ entryPoints: [join(web, 'app.css')], outfile: join(out, 'app.css'), minify: true, logLevel: 'warning' });
copyFileSync(join(web, 'index.html'), join(out, 'index.html'));
// The bundle carries dagre and its graphlib; their MIT licenses travel with it.
const licenses = ['@dagrejs/dagre', '@dagrejs/graphlib'].map(
  (p) => `${p}\n\n${readFileSync(join(root, 'node_modules', p, 'LICENSE'), 'utf8').trim()}\n`,
);
writeFileSync(join(out, 'THIRD-PARTY-LICENSES.txt'), licenses.join('\n'));
