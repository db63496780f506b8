#!/usr/bin/env node
// npm pack does not bundle a workspace dependency through its symlink: `prepack` puts a real copy of the built
// @offshoot/client and @offshoot/tools under this package's node_modules so the tarball carries them, and `postpack`
// takes them out again.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundled = ['client', 'tools'];

if (process.argv[2] === 'remove') {
  rmSync(join(pkg, 'node_modules'), { recursive: true, force: true });
} else {
  const built = [...bundled.map((b) => join(pkg, `../${b}/dist/index.js`)), join(pkg, 'dist/cli/main.js')];
  for (const file of built) {
    if (!existsSync(file)) {
      console.error(`offshoot pack: ${file} is missing; run 'make build' first`);
      process.exit(1);
    }
  }
  for (const b of bundled) {
    const from = join(pkg, `../${b}`);
    const staged = join(pkg, `node_modules/@offshoot/${b}`);
    rmSync(staged, { recursive: true, force: true });
    mkdirSync(staged, { recursive: true });
    cpSync(join(from, 'package.json'), join(staged, 'package.json'));
    cpSync(join(from, 'dist'), join(staged, 'dist'), { recursive: true });
  }
}
