import { createHash } from 'node:crypto';
import type { OpsContext } from './context.js';

/**
 * A digest of every ref's key and version: it changes whenever a branch is created, moved or removed, by anyone
 * (a daemon, the CLI, another host). One listing where the backend lists etags (S3); where it does not (a local
 * directory), each ref, a few hundred bytes, is stat-ed for its etag.
 */
export async function refsVersion(ctx: OpsContext): Promise<string> {
  const backend = ctx.store.backend;
  const h = createHash('sha256');
  for (const o of await backend.list('refs/')) {
    const etag = o.etag ?? (await backend.stat(o.key))?.etag ?? 'gone';
    h.update(`${o.key}\0${etag}\n`);
  }
  return h.digest('hex');
}
