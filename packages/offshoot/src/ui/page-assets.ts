import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../core/errors.js';

/** One built file of the page, held in memory with its content type. */
export interface PageAsset {
  body: Buffer;
  type: string;
}

/** The built page: index.html for every view URL, plus its script and stylesheet. */
export interface PageAssets {
  index: PageAsset;
  files: Map<string, PageAsset>;
}

/**
 * The package's dist/web/, where scripts/build-web.mjs puts the page: found by walking up to the package root, so it
 * holds whether this module runs as source (src/ui/), as tsc output (dist/ui/) or inside a bundle.
 */
function webDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'offshoot')
      return join(dir, 'dist', 'web');
    dir = dirname(dir);
  }
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'web');
}

/** Loads the built page once; fails with a hint when the package was not built. */
export function loadPageAssets(): PageAssets {
  const web = webDir();
  const read = (name: string, type: string): PageAsset => {
    try {
      return { body: readFileSync(join(web, name)), type };
    } catch (err) {
      throw fail('UNAVAILABLE', `the dashboard page is not built (${name} is missing)`, {
        hint: 'run make build (it bundles the page with esbuild)',
        cause: err,
      });
    }
  };
  return {
    index: read('index.html', 'text/html; charset=utf-8'),
    files: new Map([
      ['/assets/app.js', read('app.js', 'text/javascript; charset=utf-8')],
      ['/assets/app.css', read('app.css', 'text/css; charset=utf-8')],
    ]),
  };
}
