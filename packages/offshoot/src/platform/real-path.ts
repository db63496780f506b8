import { realpathSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/**
 * The real absolute path of p with symlinks resolved in the part that exists; the rest (a file not created yet) is
 * kept as written, so two spellings of one place compare equal before the place exists.
 */
export function realPath(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync.native(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : resolve(realPath(parent), basename(abs));
  }
}

/** True when path is dir itself or lies below it, comparing real paths. */
export function isWithin(path: string, dir: string): boolean {
  const p = realPath(path);
  const d = realPath(dir);
  return p === d || p.startsWith(d.endsWith('/') ? d : `${d}/`);
}
