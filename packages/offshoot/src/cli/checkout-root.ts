import { join, resolve } from 'node:path';
import { userCacheDir } from '../platform/user-cache-dir.js';
import { s3ConfigFromEnv } from '../store/s3/s3-config.js';
import type { StoreSpec } from '../store/store-spec.js';
import { nodeCrypto } from '../platform/node-crypto.js';

/**
 * Where checkouts/ and checkouts-ro/ live: the store directory for a local store; for an S3 store
 * $OFFSHOOT_CHECKOUTS, else a per-store directory under the user cache dir named by 16 hex digits of
 * sha256("s3|bucket|prefix|endpoint|region|pathstyle"), so two stores never share checkouts.
 */
export function checkoutRootFor(spec: StoreSpec, env: NodeJS.ProcessEnv = process.env): string {
  if (spec.kind === 'local') return spec.root;
  if (env.OFFSHOOT_CHECKOUTS) return resolve(env.OFFSHOOT_CHECKOUTS);
  const s3 = s3ConfigFromEnv(env);
  const identity = [
    's3',
    spec.bucket,
    spec.prefix,
    s3.endpoint ?? '',
    s3.region ?? '',
    String(s3.pathStyle ?? false),
  ].join('|');
  const id = nodeCrypto().createHash('sha256').update(identity).digest('hex').slice(0, 16);
  return join(userCacheDir(env), 'offshoot', id);
}
