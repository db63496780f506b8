#!/usr/bin/env node
// npm pack does not bundle a workspace dependency through its symlink: `prepack` puts a real copy of the built
// @offshoot/client under this package's node_modules so the tarball carries it, and `postpack` takes it out again.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const client = join(pkg, '../client');
const staged = join(pkg, 'node_modules/@offshoot/client');

if (process.argv[2] === 'remove') {
  rmSync(join(pkg, 'node_modules'), { recursive: true, force: true });
} else {
  for (const built of [join(client, 'dist/index.js'), join(pkg, 'dist/cli/main.js')]) {
    if (!existsSync(built)) {
      console.error(`offshoot pack: ${built} is missing; run 'make build' first`);
      process.exit(1);
    }
  }
  rmSync(staged, { recursive: true, force: true });
  mkdirSync(staged, { recursive: true });
  cpSync(join(client, 'package.json'), join(staged, 'package.json'));
  cpSync(join(client, 'dist'), join(staged, 'dist'), { recursive: true });
}
