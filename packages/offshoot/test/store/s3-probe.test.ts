import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import type { OffshootError } from '../../src/core/errors.js';
import { casProbe } from '../../src/store/s3/cas-probe.js';
import { S3Backend, openS3Backend } from '../../src/store/s3/s3-backend.js';
import { faultBackend } from './fault-backend.js';
import {
  S3_ENDPOINT,
  S3_SERVER,
  SERVER_ENFORCES_CONDITIONAL_DELETE,
  bucketKeys,
  createTestBucket,
  s3Unavailable,
  startFaultProxy,
} from './s3-test-env.js';
import type { FaultProxy, TestBucket } from './s3-test-env.js';

const region = 'us-east-1';

async function refusal(p: Promise<unknown>): Promise<OffshootError> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => {
    caught = err;
    return hasCode(err, 'UNSUPPORTED');
  });
  return caught as OffshootError;
}

// The fault proxy rewrites signed headers, which moto does not check and RGW refuses (SignatureDoesNotMatch):
// the tests that need it run in the moto pass only.
const viaProxy = S3_SERVER === 'moto' ? it : (_name: string, _fn: () => Promise<void>) => undefined;

if (!s3Unavailable('S3 CAS probe')) {
  describe('S3 CAS probe', () => {
    let bucket: TestBucket;
    let proxy: FaultProxy;
    before(async () => {
      bucket = await createTestBucket();
      proxy = await startFaultProxy();
    });
    after(async () => {
      await proxy?.stop();
      await bucket?.remove();
    });

    it('passes on the test server, finds what it enforces, and leaves no probe object', async () => {
      const backend = await openS3Backend({ bucket: bucket.name, prefix: 'p1', endpoint: S3_ENDPOINT, region });
      try {
        // moto has AWS S3's semantics; RGW 16 enforces If-Match on PUT only unquoted, and not on DELETE.
        assert.ok(backend instanceof S3Backend);
        assert.equal(backend.etagForm, S3_SERVER === 'rgw' ? 'unquoted' : 'as-returned');
        assert.equal(backend.capabilities.conditionalDelete, SERVER_ENFORCES_CONDITIONAL_DELETE);
        // Probing through the opened backend: its deletes are guarded either way (by the server, or by its precheck).
        assert.deepEqual(await casProbe(backend), { conditionalDelete: true });
        assert.deepEqual(await backend.list(''), []);
        assert.deepEqual(await bucketKeys(bucket.name), []);
      } finally {
        await backend.close();
      }
    });

    viaProxy(
      'makes exactly the requests of its steps, on one probe/cas-<16 hex> key under the store prefix',
      async () => {
        await proxy.setRules([]);
        await proxy.clearLog();
        const backend = await openS3Backend({ bucket: bucket.name, prefix: 'p2', endpoint: proxy.endpoint, region });
        await backend.close();
        const log = await proxy.log();
        const paths = new Set(log.map((r) => r.path));
        assert.equal(paths.size, 1, `one key: ${[...paths].join(' ')}`);
        assert.match([...paths][0] ?? '', new RegExp(`^/${bucket.name}/p2/probe/cas-[0-9a-f]{16}$`));
        // create, recreate, read, stale replace, read, replace, read, stale delete, HEAD, delete
        assert.deepEqual(
          log.map((r) => r.method),
          ['PUT', 'PUT', 'GET', 'PUT', 'GET', 'PUT', 'GET', 'DELETE', 'HEAD', 'DELETE'],
        );
      },
    );

    viaProxy('refuses an endpoint that drops If-None-Match and If-Match, naming the step, and cleans up', async () => {
      const ignoring = await startFaultProxy(['--strip-conditions']);
      try {
        const err = await refusal(
          openS3Backend({ bucket: bucket.name, prefix: 'p3', endpoint: ignoring.endpoint, region }),
        );
        assert.match(err.message, /does not enforce conditional writes \(a repeated create-only put was accepted\)/);
        assert.ok(err.message.includes(ignoring.endpoint), err.message);
        assert.match(err.hint ?? '', /If-None-Match\/If-Match on PUT/);
        assert.match(err.hint ?? '', /GCS/);
        assert.equal(err.retryable, false);
        assert.deepEqual(await bucketKeys(bucket.name), []);
      } finally {
        await ignoring.stop();
      }
    });

    viaProxy('refuses an endpoint that enforces create-only but ignores If-Match', async () => {
      await proxy.setRules([{ action: { stripHeaders: ['if-match'] } }]);
      const err = await refusal(openS3Backend({ bucket: bucket.name, prefix: 'p4', endpoint: proxy.endpoint, region }));
      assert.match(err.message, /\(a put with a stale If-Match ETag was accepted\)/);
      assert.deepEqual(await bucketKeys(bucket.name), []);
    });

    viaProxy('accepts an endpoint that ignores If-Match only on DELETE, and then guards deletes itself', async () => {
      await proxy.setRules([{ match: { method: 'DELETE' }, action: { stripHeaders: ['if-match'] } }]);
      const backend = await openS3Backend({ bucket: bucket.name, prefix: 'p5', endpoint: proxy.endpoint, region });
      try {
        assert.equal(backend.capabilities.conditionalDelete, false);
        const e1 = await backend.put('refs/db/main', Buffer.from('v1'));
        const e2 = await backend.put('refs/db/main', Buffer.from('v2'), { ifMatch: e1 });
        await assert.rejects(backend.delete('refs/db/main', { ifMatch: e1 }), (err: unknown) =>
          hasCode(err, 'CAS_CONFLICT'),
        );
        assert.deepEqual((await backend.get('refs/db/main')).body, Buffer.from('v2'));
        await backend.delete('refs/db/main', { ifMatch: e2 });
        assert.equal(await backend.stat('refs/db/main'), undefined);
      } finally {
        await backend.close();
      }
    });

    viaProxy('probe: false makes no request at all, even through a non-conforming endpoint', async () => {
      await proxy.setRules([{ action: { stripHeaders: ['if-match', 'if-none-match'] } }]);
      await proxy.clearLog();
      const backend = await openS3Backend({
        bucket: bucket.name,
        prefix: 'p6',
        endpoint: proxy.endpoint,
        region,
        probe: false,
      });
      await backend.close();
      assert.deepEqual(await proxy.log(), []);
      assert.equal(backend.capabilities.conditionalDelete, false);
    });

    it('a store failure during the probe surfaces as itself, not as UNSUPPORTED', async () => {
      const backend = await openS3Backend({
        bucket: bucket.name,
        prefix: 'p7',
        endpoint: S3_ENDPOINT,
        region,
        probe: false,
      });
      try {
        const flaky = faultBackend(backend, [{ method: 'put', fault: { status: 503 }, skip: 1 }]);
        await assert.rejects(
          casProbe(flaky, 'flaky'),
          (err: unknown) => hasCode(err, 'UNAVAILABLE') && (err as OffshootError).retryable,
        );
        assert.equal(flaky.fired.length, 1);
        assert.deepEqual(await backend.list(''), [], 'the probe object was cleaned up');
      } finally {
        await backend.close();
      }
    });

    it('refuses a missing bucket with NOT_FOUND and a hint to create it', async () => {
      await assert.rejects(
        openS3Backend({ bucket: `${bucket.name}-missing`, endpoint: S3_ENDPOINT, region }),
        (err: unknown) => {
          return hasCode(err, 'NOT_FOUND') && /create it/.test((err as OffshootError).hint ?? '');
        },
      );
    });
  });
}
