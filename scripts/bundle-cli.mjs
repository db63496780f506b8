// Bundles the CLI into one CommonJS file, packages/offshoot/dist/cli.cjs: one file to read and compile at start-up
// instead of ~90 ES modules. Modules a command reaches only through `await import()` are bundled but evaluated only
// when that command runs; npm packages stay outside the bundle (native addons must), and a package imported by
// such a module is required only when the module is first evaluated. hash-wasm is bundled, tree-shaken, and so are
// our own @offshoot/client and @offshoot/tools: they are ES modules, and requiring them from this CommonJS file would
// start Node's ESM loader on every command (~14 ms). The bundle's second line names the build (a hash of the rest): bin/offshoot.cjs keys its
// V8 code cache by it, since V8 itself checks only that a cached script has the same length.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../packages/offshoot/', import.meta.url));
const deps = Object.keys(JSON.parse(readFileSync(`${root}package.json`, 'utf8')).dependencies);
const bundled = new Set(['hash-wasm', '@offshoot/client', '@offshoot/tools']);
const external = deps.filter((d) => !bundled.has(d)).flatMap((d) => [d, `${d}/*`]);

const outfile = `${root}dist/cli.cjs`;
const { outputFiles } = await build({
  entryPoints: [`${root}src/cli/main.ts`],
  outfile,
  write: false,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  external,
  mainFields: ['module', 'main'],
  // Dynamic imports of packages become lazy require()s: one loader (CJS) for the whole process.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': '__offshootModuleUrl' },
  banner: { js: "const __offshootModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
  legalComments: 'none',
});
const text = outputFiles[0].text;
const buildId = createHash('sha256').update(text).digest('hex').slice(0, 32);
const eol = text.startsWith('#!') ? text.indexOf('\n') + 1 : 0;
// A bundle of ASCII only says so on that line, and bin/offshoot.cjs then reads it as latin1, which spares decoding
// UTF-8 (about a millisecond a start for ~900 KB); esbuild escapes non-ASCII in code, so only a comment or a regular
// expression literal can bring some in, and the bundle is then read as UTF-8.
// A string is ASCII only when its UTF-8 form has one byte per character.
const ascii = Buffer.byteLength(text) === text.length ? ' ascii' : '';
writeFileSync(outfile, `${text.slice(0, eol)}// offshoot build ${buildId}${ascii}\n${text.slice(eol)}`, {
  mode: 0o755,
});
