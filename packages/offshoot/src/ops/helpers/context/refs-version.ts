import { nodeCrypto } from '../../../platform/node-crypto.js';
import type { OpsContext } from './context.js';

/**
 * Every ref's key and version: a branch created, moved or removed, by anyone (a daemon, the CLI, another host),
 * changes it. One listing where the backend lists etags (S3); where it does not (a local directory), each ref, a
 * few hundred bytes, is stat-ed for its etag.
 */
export async function refVersions(ctx: OpsContext): Promise<Map<string, string>> {
  const backend = ctx.store.backend;
  const out = new Map<string, string>();
  for (const o of await backend.list('refs/')) {
    out.set(o.key, o.etag ?? (await backend.stat(o.key))?.etag ?? 'gone');
  }
  return out;
}

/** A digest of refVersions: it changes whenever any ref does. */
export async function refsVersion(ctx: OpsContext): Promise<string> {
  const h = nodeCrypto().createHash('sha256');
  for (const [key, etag] of await refVersions(ctx)) h.update(`${key}\0${etag}\n`);
  return h.digest('hex');
}
