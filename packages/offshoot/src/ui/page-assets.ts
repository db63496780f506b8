import { readFileSync } from 'node:fs';
import { fail } from '../core/errors.js';

/** One built file of the page, held in memory with its content type and a validator for conditional requests. */
export interface PageAsset {
  body: Buffer;
  type: string;
}

/** The built page: index.html for every view URL, plus its script and stylesheet. */
export interface PageAssets {
  index: PageAsset;
  files: Map<string, PageAsset>;
}

// The page is built by scripts/build-web.mjs into the package's dist/web/; this file sits two levels below the
// package root both as source (src/ui/) and as built output (dist/ui/).
const WEB_DIR = new URL('../../dist/web/', import.meta.url);

/** Loads the built page once; fails with a hint when the package was not built. */
export function loadPageAssets(): PageAssets {
  const read = (name: string, type: string): PageAsset => {
    try {
      return { body: readFileSync(new URL(name, WEB_DIR)), type };
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
