import { statSync } from 'node:fs';
import { fail } from '../core/errors.js';
import { LocalBackend } from './local/local-backend.js';
import type { Backend } from './backend.js';
import type { StoreSpec } from './store-spec.js';

/** Opens the backend a spec names; the S3 client is loaded only for s3:// specs so local commands stay fast. */
export async function openBackend(spec: StoreSpec, opts: { probe?: boolean } = {}): Promise<Backend> {
  if (spec.kind === 'local') {
    if (statSync(spec.root, { throwIfNoEntry: false })?.isDirectory() === false)
      throw fail('INVALID_ARGUMENT', `store ${spec.text} is a file, not a store directory`, {
        hint: 'pass the store directory, e.g. -store ./.offshoot, not a file inside it or a database',
      });
    return new LocalBackend(spec.root);
  }
  const { openS3Backend, s3ConfigFromEnv } = await import('./s3/s3-backend.js');
  return openS3Backend({ ...s3ConfigFromEnv(), bucket: spec.bucket, prefix: spec.prefix, probe: opts.probe ?? true });
}
