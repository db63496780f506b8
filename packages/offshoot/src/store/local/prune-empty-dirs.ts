import { rmdir } from 'node:fs/promises';
import { dirname, relative, isAbsolute } from 'node:path';

/**
 * Removes dir and then each parent that became empty, stopping at the first non-empty one and never touching
 * root itself. Best-effort: any failure (a concurrent writer's new file, permissions) just ends the climb.
 */
export async function pruneEmptyDirs(root: string, dir: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    const rel = relative(root, d);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return;
    try {
      await rmdir(d);
    } catch {
      return;
    }
  }
}
