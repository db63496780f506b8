// On S3 a writer that dies mid multipart upload leaves the upload's parts, kept (and billed) until aborted. GC aborts
// the store's incomplete uploads once they are past the age a live writer could still be sending them at, and no
// other: not a younger one, not one outside the store's prefix.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runGc, TEMPORARY_MIN_AGE_MS } from '../../src/ops/gc.js';
import { adminClient, s3Unavailable } from '../store/s3-test-env.js';
import { openS3TestStore, type S3TestStore } from './s3-store.js';

/** The keys of the bucket's incomplete multipart uploads. */
async function uploads(bucket: string): Promise<string[]> {
  const { sdk, client } = await adminClient();
  const out = await client.send(new sdk.ListMultipartUploadsCommand({ Bucket: bucket }));
  return (out.Uploads ?? []).map((u) => u.Key ?? '').sort();
}

/** Starts a multipart upload of key and sends one part of it, as a writer that dies right after would leave it. */
async function abandon(bucket: string, key: string): Promise<void> {
  const { sdk, client } = await adminClient();
  const { UploadId } = await client.send(new sdk.CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  await client.send(
    new sdk.UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: Buffer.alloc(1024, 7) }),
  );
}

if (!s3Unavailable('gc of abandoned multipart uploads')) {
  describe('gc of abandoned multipart uploads (S3)', () => {
    let ts: S3TestStore;
    before(async () => {
      ts = await openS3TestStore();
    });
    after(async () => {
      const { sdk, client } = await adminClient();
      const out = await client.send(new sdk.ListMultipartUploadsCommand({ Bucket: ts.bucket.name }));
      for (const u of out.Uploads ?? [])
        await client.send(
          new sdk.AbortMultipartUploadCommand({ Bucket: ts.bucket.name, Key: u.Key, UploadId: u.UploadId }),
        );
      await ts.cleanup();
    });

    it('aborts the store’s incomplete uploads past the age, and keeps younger ones and those of other prefixes', async () => {
      const bucket = ts.bucket.name;
      const ours = [
        `${ts.prefix}/data/0123456789abcdef0123456789abcdef/1/snapshot-0000000000000001.ltx`,
        `${ts.prefix}/refs/app/main`,
        `${ts.prefix}/offshoot.json`,
      ];
      const theirs = 'elsewhere/data/0123456789abcdef0123456789abcdef/1/snapshot-0000000000000001.ltx';
      for (const key of [...ours, theirs]) await abandon(bucket, key);
      assert.deepEqual(await uploads(bucket), [...ours, theirs].sort());

      // Right after: as young as a live writer's, so kept.
      const now = await runGc(ts.context({ now: () => new Date() }), { grace: 0n });
      assert.equal(now.temporaries, 0);
      assert.deepEqual(await uploads(bucket), [...ours, theirs].sort());

      // Later: past any live writer's, the store's own are aborted, parts and all.
      const later = () => new Date(Date.now() + TEMPORARY_MIN_AGE_MS + 60_000);
      const gc = await runGc(ts.context({ now: later }), { grace: 0n });
      assert.equal(gc.temporaries, ours.length);
      assert.deepEqual(await uploads(bucket), [theirs]);
    });
  });
}
