import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../core/errors.js';
import { realPath } from '../platform/real-path.js';

/** Where a store lives: a local directory or an S3 bucket (with an optional key prefix). */
export type StoreSpec =
  | { kind: 'local'; root: string; text: string }
  | { kind: 's3'; bucket: string; prefix: string; text: string };

/** The store used when neither -store nor OFFSHOOT_STORE is given. */
export const DEFAULT_STORE = '.offshoot';

/** Parses a store spec: a path, `file:///abs/path`, or `s3://bucket[/prefix]`. */
export function parseStoreSpec(text: string, cwd: string = process.cwd()): StoreSpec {
  if (text === '') throw fail('USAGE', 'empty store spec', { hint: 'pass -store PATH or s3://bucket/prefix' });
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(text);
  if (scheme) {
    const s = (scheme[1] ?? '').toLowerCase();
    if (s === 'file') return { kind: 'local', root: fileStoreRoot(text), text };
    if (s === 's3') {
      const rest = text.slice('s3://'.length);
      const slash = rest.indexOf('/');
      const bucket = slash < 0 ? rest : rest.slice(0, slash);
      const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
        throw fail('USAGE', `invalid S3 bucket name ${JSON.stringify(bucket)} in store spec ${text}`, {
          hint: 'write the store as s3://bucket[/prefix]',
        });
      }
      return { kind: 's3', bucket, prefix, text };
    }
    throw fail('USAGE', `unsupported store scheme "${s}://" in ${text}`, {
      hint: 'use a path, file:///abs/path or s3://bucket[/prefix]',
    });
  }
  return { kind: 'local', root: isAbsolute(text) ? text : resolve(cwd, text), text };
}

/** Resolves the store spec from -store, then $OFFSHOOT_STORE, then ./.offshoot. */
export function resolveStoreSpec(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd?: string,
): StoreSpec {
  return parseStoreSpec(flag ?? env.OFFSHOOT_STORE ?? DEFAULT_STORE, cwd);
}

function fileStoreRoot(text: string): string {
  try {
    return fileURLToPath(text);
  } catch {
    throw fail('USAGE', `store URL ${text} is not an absolute file URL`, {
      hint: 'write file:///abs/path (three slashes), or give the store as a plain path such as ./.offshoot',
    });
  }
}

/**
 * The one spelling of a store, whatever way it was typed: the real absolute path of a local store, or
 * `s3://bucket[/prefix]` with the prefix's slashes trimmed. The default daemon socket is derived from it, and a
 * daemon compares it with the store a request says it is for.
 */
export function canonicalStore(spec: StoreSpec): string {
  if (spec.kind === 'local') return realPath(spec.root);
  return `s3://${spec.bucket}${spec.prefix === '' ? '' : `/${spec.prefix}`}`;
}

/**
 * What the default daemon socket is derived from: the canonical store and, for S3, the endpoint it is reached at
 * (normalised as a URL), since buckets of one name on two servers are two stores. A local store, or S3 without an
 * endpoint (AWS itself), is its canonical store alone, so those sockets stay where they were.
 */
export function storeSocketKey(spec: StoreSpec, endpoint: string | undefined): string {
  const canonical = canonicalStore(spec);
  if (spec.kind !== 's3' || endpoint === undefined) return canonical;
  let url = endpoint;
  try {
    url = new URL(endpoint).href.replace(/\/+$/, '');
  } catch {
    // Not a URL: the S3 client will refuse it; the socket is derived from it as written.
  }
  return `${canonical} ${url}`;
}
