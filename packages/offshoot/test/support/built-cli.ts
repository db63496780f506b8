// The built CLI that end-to-end suites spawn: `./offshoot` at the repository root, over the bundle in
// packages/offshoot/dist (the fast path the package `bin` runs too).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
/** The `./offshoot` wrapper. */
export const offshootBin = path.join(repoRoot, 'offshoot');
const builtMain = path.join(repoRoot, 'packages/offshoot/dist/cli.cjs');

function newestSource(): number {
  const src = path.join(repoRoot, 'packages/offshoot/src');
  let newest = 0;
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (f.endsWith('.ts')) newest = Math.max(newest, statSync(path.join(src, f)).mtimeMs);
  }
  return newest;
}

let checked = false;

/**
 * Builds the CLI only when its bundle is missing or older than a source file (`make test` builds first, so under it
 * this never rebuilds): rewriting dist/ while another test file's daemon or CLI is loading it would hand them
 * half-written modules. tsc emits even when an unrelated file fails to typecheck; the bundle is built from source.
 */
export function ensureBuilt(): void {
  if (checked) return;
  if (!existsSync(builtMain) || statSync(builtMain).mtimeMs < newestSource()) {
    spawnSync(path.join(repoRoot, 'node_modules/.bin/tsc'), ['-p', 'packages/offshoot/tsconfig.json'], {
      cwd: repoRoot,
      stdio: 'ignore',
    });
    spawnSync(process.execPath, ['scripts/bundle-cli.mjs'], { cwd: repoRoot, stdio: 'ignore' });
  }
  assert.ok(existsSync(builtMain), 'the CLI was built');
  checked = true;
}
