import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import { openS3Backend, parseS3Spec, s3ConfigFromEnv } from '../../src/store/s3/s3-backend.js';
import { runConformance } from './conformance.js';
import {
  S3_ENDPOINT,
  SERVER_ENFORCES_CONDITIONAL_DELETE,
  bucketKeys,
  createTestBucket,
  openUploads,
  s3Unavailable,
} from './s3-test-env.js';

const MiB = 1024 * 1024;
const region = 'us-east-1';

describe('S3 store spec and environment', () => {
  it('parses s3://bucket[/prefix], trimming slashes', () => {
    assert.deepEqual(parseS3Spec('s3://my-bucket'), { bucket: 'my-bucket', prefix: '' });
    assert.deepEqual(parseS3Spec('s3://my-bucket/'), { bucket: 'my-bucket', prefix: '' });
    assert.deepEqual(parseS3Spec('s3://my.bucket/team/stores/'), { bucket: 'my.bucket', prefix: 'team/stores' });
  });

  it('refuses other schemes, bad bucket names and empty prefix segments with USAGE', () => {
    for (const spec of [
      'gs://b/p',
      's3://',
      's3://Upper',
      's3://ab',
      's3://b_x/p',
      's3://bucket/a//b',
      '/local/path',
    ]) {
      assert.throws(
        () => parseS3Spec(spec),
        (err: unknown) => hasCode(err, 'USAGE'),
        spec,
      );
    }
  });

  it('reads the endpoint, region and path style from the environment', () => {
    assert.deepEqual(s3ConfigFromEnv({}), { pathStyle: false });
    assert.deepEqual(s3ConfigFromEnv({ OFFSHOOT_S3_ENDPOINT: 'http://127.0.0.1:9000' }), {
      endpoint: 'http://127.0.0.1:9000',
      region: 'auto',
      pathStyle: false,
    });
    assert.deepEqual(s3ConfigFromEnv({ OFFSHOOT_S3_ENDPOINT: 'https://s3.example', OFFSHOOT_S3_REGION: 'eu-west-1' }), {
      endpoint: 'https://s3.example',
      region: 'eu-west-1',
      pathStyle: false,
    });
    assert.deepEqual(s3ConfigFromEnv({ OFFSHOOT_S3_REGION: 'us-west-2' }), { region: 'us-west-2', pathStyle: false });
    for (const yes of ['1', 'true', 'YES', 'on'])
      assert.equal(s3ConfigFromEnv({ OFFSHOOT_S3_PATH_STYLE: yes }).pathStyle, true, yes);
    for (const no of ['0', 'false', 'off', ''])
      assert.equal(s3ConfigFromEnv({ OFFSHOOT_S3_PATH_STYLE: no }).pathStyle, false, no);
  });
});

// Two shapes of store: at the bucket root, and under a prefix (which every key must carry and list must strip).
for (const withPrefix of [false, true]) {
  const suite = `s3${withPrefix ? ' (prefixed)' : ''}`;
  if (s3Unavailable(`backend conformance: ${suite}`)) break;
  runConformance(
    suite,
    async () => {
      const bucket = await createTestBucket();
      const prefix = withPrefix ? `stores/${randomBytes(4).toString('hex')}` : '';
      const backend = await openS3Backend({ bucket: bucket.name, prefix, endpoint: S3_ENDPOINT, region });
      return {
        backend,
        cleanup: bucket.remove,
        spawnWorkerEnv: {
          OFFSHOOT_RACE_BACKEND: `s3:${bucket.name}${prefix ? `/${prefix}` : ''}`,
          OFFSHOOT_S3_ENDPOINT: S3_ENDPOINT ?? '',
          OFFSHOOT_S3_REGION: region,
        },
      };
    },
    // moto serves one request at a time: a 40 MiB object still takes the multipart path (3 parts of 16 MiB), and the
    // 8-process race runs fewer rounds than on the local backend to keep the suite within minutes.
    { bigObjectBytes: 40 * MiB, raceProcesses: 8, raceRounds: withPrefix ? 10 : 25 },
  );
}

if (S3_ENDPOINT !== undefined) {
  describe('S3 backend specifics', () => {
    async function withStore(
      fn: (ctx: { backend: Awaited<ReturnType<typeof openS3Backend>>; bucket: string; dir: string }) => Promise<void>,
    ): Promise<void> {
      const bucket = await createTestBucket();
      const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
      const backend = await openS3Backend({
        bucket: bucket.name,
        prefix: '/team/store/',
        endpoint: S3_ENDPOINT,
        region,
        tuning: { multipartThreshold: 5 * MiB, partSize: 5 * MiB, copyPartThreshold: MiB, copyPartSize: 5 * MiB },
      });
      try {
        await fn({ backend, bucket: bucket.name, dir });
      } finally {
        await backend.close();
        await bucket.remove();
        rmSync(dir, { recursive: true, force: true });
      }
    }

    it('keys live under the store prefix; names, etags and capabilities are as documented', () =>
      withStore(async ({ backend, bucket }) => {
        assert.equal(backend.name, `s3://${bucket}/team/store`);
        assert.deepEqual(backend.capabilities, {
          conditionalDelete: SERVER_ENFORCES_CONDITIONAL_DELETE,
          cheapCopy: true,
        });
        const etag = await backend.put('refs/db/main', Buffer.from('{"generation":1}'));
        assert.match(etag, /^"[0-9a-f]{32}"$/, 'the ETag comes back exactly as S3 sent it, quotes included');
        assert.deepEqual(await bucketKeys(bucket), ['team/store/refs/db/main']);
        assert.deepEqual(await backend.list(''), [{ key: 'refs/db/main', size: 16, etag }]);
      }));

    it('a file above the threshold goes up in parts, create-only, and reads back byte for byte', () =>
      withStore(async ({ backend, dir }) => {
        const content = randomBytes(11 * MiB + 123);
        const file = path.join(dir, 'snap.ltx');
        writeFileSync(file, content);
        const etag = await backend.put('data/l/1/snapshot.ltx', { file }, { ifNoneMatch: true });
        assert.match(etag, /-3"$/, 'a three-part multipart ETag');
        const got = await backend.get('data/l/1/snapshot.ltx');
        assert.ok(got.body.equals(content));
        assert.equal(got.etag, etag);
        await assert.rejects(backend.put('data/l/1/snapshot.ltx', { file }, { ifNoneMatch: true }), (err: unknown) =>
          hasCode(err, 'ALREADY_EXISTS'),
        );
        // Same bytes in the same parts give the same ETag, so the replacement must differ to make etag stale.
        const next = path.join(dir, 'next.ltx');
        writeFileSync(next, randomBytes(6 * MiB));
        const replaced = await backend.put('data/l/1/snapshot.ltx', { file: next }, { ifMatch: etag });
        assert.notEqual(replaced, etag);
        assert.equal((await backend.stat('data/l/1/snapshot.ltx'))?.etag, replaced);
        await assert.rejects(backend.put('data/l/1/snapshot.ltx', { file }, { ifMatch: etag }), (err: unknown) =>
          hasCode(err, 'CAS_CONFLICT'),
        );
        assert.equal((await backend.stat('data/l/1/snapshot.ltx'))?.size, 6 * MiB);
      }));

    it('an object above the copy threshold is copied part by part (UploadPartCopy), create-only honoured', () =>
      withStore(async ({ backend, bucket }) => {
        const content = randomBytes(11 * MiB);
        await backend.put('data/a/1/snapshot.ltx', content);
        await backend.copy('data/a/1/snapshot.ltx', 'data/b/1/snapshot.ltx', { ifNoneMatch: true });
        const got = await backend.get('data/b/1/snapshot.ltx');
        assert.ok(got.body.equals(content));
        assert.match(got.etag, /-3"$/, 'built from three copied parts');
        await backend.put('data/c/1/snapshot.ltx', Buffer.from('occupied'));
        await assert.rejects(
          backend.copy('data/a/1/snapshot.ltx', 'data/c/1/snapshot.ltx', { ifNoneMatch: true }),
          (err: unknown) => hasCode(err, 'ALREADY_EXISTS'),
        );
        assert.deepEqual((await backend.get('data/c/1/snapshot.ltx')).body, Buffer.from('occupied'));
        await backend.copy('data/a/1/snapshot.ltx', 'data/c/1/snapshot.ltx');
        assert.ok((await backend.get('data/c/1/snapshot.ltx')).body.equals(content));
        assert.deepEqual(await openUploads(bucket), []);
      }));

    it('a small object is copied with one CopyObject and keeps its single-part ETag', () =>
      withStore(async ({ backend }) => {
        const etag = await backend.put('data/a/base.json', Buffer.from('{"lineage":"x"}'));
        await backend.copy('data/a/base.json', 'data/b/base.json');
        assert.equal((await backend.stat('data/b/base.json'))?.etag, etag);
      }));
  });
}
