import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The offshoot package's version, from the nearest package.json named "offshoot" above this module: the same answer
 * from src/ (tsx), dist/ (tsc) and the one-file bundle, which all sit at different depths.
 */
export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'offshoot') return pkg.version ?? 'dev';
    } catch {
      // No manifest at this level (or an unreadable one): keep walking up.
    }
    if (dirname(dir) === dir) return 'dev';
  }
}
