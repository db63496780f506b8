// An at-rest test store in a fresh bucket on the S3 test server: the same shape as the local TestStore of the ops
// suites (so their history and model helpers run unchanged), with the real S3 backend underneath, optionally
// wrapped by a counter or a fault injector.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import type { Backend } from '../../src/store/backend.js';
import { openS3Backend } from '../../src/store/s3/s3-backend.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { ManualClock, type TestStore, type TestStoreOptions } from '../ops/harness.js';
import { S3_ENDPOINT, createTestBucket, type TestBucket } from '../store/s3-test-env.js';

/** The region every S3 end-to-end suite talks to the test server in. */
export const S3_REGION = 'us-east-1';

/** A TestStore over S3, with its bucket and the key prefix the store lives under. */
export interface S3TestStore extends TestStore {
  bucket: TestBucket;
  prefix: string;
}

/** Opens the real S3 backend on bucket/prefix at the test endpoint, running the conditional-write probe as the CLI does. */
export function openTestS3Backend(bucket: string, prefix: string): Promise<Backend> {
  return openS3Backend({ bucket, prefix, endpoint: S3_ENDPOINT, region: S3_REGION, pathStyle: true });
}

/**
 * Creates a fresh bucket, initializes a store under a prefix in it, and opens it through the real S3 backend
 * (wrapped by opts.wrap). Checkouts, temp files and the clock are as in the local test store.
 */
export async function openS3TestStore(opts: TestStoreOptions = {}): Promise<S3TestStore> {
  const bucket = await createTestBucket();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  mkdirSync(path.join(dir, 'tmp'));
  const prefix = 'store';
  const spec = parseStoreSpec(`s3://${bucket.name}/${prefix}`);
  let store: Store | undefined;
  try {
    const init = await Store.init(spec, {
      backend: await openTestS3Backend(bucket.name, prefix),
      ...(opts.layout === undefined ? {} : { layout: opts.layout }),
    });
    await init.close();
    const raw = await openTestS3Backend(bucket.name, prefix);
    store = await Store.open(spec, { backend: opts.wrap ? opts.wrap(raw) : raw });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    await bucket.remove();
    throw err;
  }
  const opened = store;
  const clock = new ManualClock();
  const base = {
    now: clock.now,
    warn: opts.warn ?? (() => undefined),
    ...(opts.forkFloor !== undefined ? { forkFloor: opts.forkFloor } : {}),
    ...(opts.snapshotEvery !== undefined ? { snapshotEvery: opts.snapshotEvery } : {}),
  };
  let n = 0;
  return {
    bucket,
    prefix,
    dir,
    spec,
    store: opened,
    ctx: makeContext(opened, dir, base),
    clock,
    context: (over = {}) => makeContext(opened, dir, { ...base, ...over }),
    tmpPath: (name) => path.join(dir, 'tmp', `${n++}-${name}`),
    cleanup: async () => {
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
      await bucket.remove();
    },
  };
}
