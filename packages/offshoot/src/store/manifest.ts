import { fail, hasCode } from '../core/errors.js';
import { MANIFEST_KEY } from '../core/keys.js';
import type { Backend } from './backend.js';

/** The newest store layout this build reads and writes (3: merged segments). */
export const LAYOUT_VERSION = 3;
/** The oldest layout a store can be initialized at (1: no copy-on-write base pointers). */
export const MIN_LAYOUT_VERSION = 1;
/** The layout the first base pointer bumps a store to (copy-on-write base pointers), as the earlier implementation does. */
export const SHARED_LAYOUT_VERSION = 2;
/** The layout that allows merged segments; a store gets it only from `offshoot init` or `offshoot upgrade`. */
export const MERGED_LAYOUT_VERSION = 3;
/**
 * The layout `offshoot init` writes unless told otherwise: the newest, whose merged segments keep every flush O(changed
 * pages); `init --layout 2` makes a store the earlier implementation reads too.
 */
export const DEFAULT_LAYOUT_VERSION = 3;

/** The store manifest at offshoot.json. */
export interface Manifest {
  layout_version: number;
  created_at: string;
}

/** Reads the manifest, refusing a missing store or a layout newer than this build. */
export async function readManifest(backend: Backend, specText: string): Promise<{ manifest: Manifest; etag: string }> {
  let got;
  try {
    got = await backend.get(MANIFEST_KEY);
  } catch (err) {
    if (hasCode(err, 'NOT_FOUND')) {
      throw fail('NOT_INITIALIZED', `open store ${specText}: no offshoot.json manifest; the store is not initialized`, {
        hint: `run 'offshoot -store ${specText} init' to create the store`,
      });
    }
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(got.body.toString('utf8'));
  } catch {
    throw fail('CORRUPT', `open store ${specText}: offshoot.json is not valid JSON`, {
      hint: 'restore offshoot.json from a backup',
    });
  }
  // Valid JSON that is not an object (null, a number, a list) is as corrupt as invalid JSON.
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw fail('CORRUPT', `open store ${specText}: offshoot.json is not a JSON object`, {
      hint: 'restore offshoot.json from a backup',
    });
  }
  const manifest = parsed as Manifest;
  if (typeof manifest.layout_version !== 'number') {
    throw fail('CORRUPT', `open store ${specText}: offshoot.json has no layout_version`, {
      hint: 'restore offshoot.json from a backup',
    });
  }
  if (manifest.layout_version > LAYOUT_VERSION) {
    throw fail(
      'LAYOUT_TOO_NEW',
      `open store ${specText}: layout version ${manifest.layout_version} is newer than this binary supports (${LAYOUT_VERSION})`,
      {
        hint: 'upgrade offshoot to a version that understands this store',
      },
    );
  }
  // The etag only a layout raise names: asked of the read when used, so opening a store hashes nothing.
  const read = got;
  return {
    manifest,
    get etag() {
      return read.etag;
    },
  };
}

/** Serializes a manifest. */
export function encodeManifest(m: Manifest): Buffer {
  return Buffer.from(JSON.stringify(m, null, 2) + '\n');
}
