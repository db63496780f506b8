import type { CompletedPart } from '@aws-sdk/client-s3';
import { fail } from '../../core/errors.js';
import type { PutCondition } from '../backend.js';
import type { S3Caller } from './s3-caller.js';

/** S3 allows at most this many parts in one multipart upload. */
export const MAX_PARTS = 10_000;

/** Sends part partNumber (1-based) of an upload and returns the part's ETag. */
export type PartSender = (uploadId: string, partNumber: number) => Promise<string>;

/**
 * Creates a multipart upload of key, sends its parts a few at a time, and completes it under cond (If-None-Match
 * or If-Match on CompleteMultipartUpload), returning the object's ETag. The object appears only at completion, so
 * on any failure the upload is aborted and nothing becomes visible.
 */
export async function runMultipartUpload(
  s3: S3Caller,
  key: string,
  partCount: number,
  sendPart: PartSender,
  cond?: PutCondition,
): Promise<string> {
  const { sdk, client, bucket } = s3;
  const created = await s3.send({ op: 'CreateMultipartUpload', key }, 0, (o) =>
    client.send(new sdk.CreateMultipartUploadCommand({ Bucket: bucket, Key: key }), o),
  );
  const uploadId = created.UploadId;
  if (uploadId === undefined) {
    throw fail('IO', `S3 CreateMultipartUpload ${key}: the endpoint returned no upload id`, {
      hint: 'the endpoint is not S3-compatible enough; use AWS S3 or MinIO',
    });
  }
  try {
    const etags = await inPool(partCount, s3.tuning.partConcurrency, (i) => sendPart(uploadId, i + 1));
    const parts: CompletedPart[] = etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 }));
    const condition = cond === undefined ? undefined : 'ifNoneMatch' in cond ? 'ifNoneMatch' : 'ifMatch';
    const done = await s3.send(
      { op: 'CompleteMultipartUpload', key, ...(condition ? { cond: condition } : {}) },
      0,
      (o) =>
        client.send(
          new sdk.CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
            ...(cond === undefined
              ? {}
              : 'ifNoneMatch' in cond
                ? { IfNoneMatch: '*' }
                : { IfMatch: s3.ifMatch(cond.ifMatch) }),
          }),
          o,
        ),
    );
    return done.ETag ?? '';
  } catch (err) {
    // Best effort: if the abort fails too, the parts linger until a bucket lifecycle rule removes them.
    await s3
      .send({ op: 'AbortMultipartUpload', key }, 0, (o) =>
        client.send(new sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }), o),
      )
      .catch(() => undefined);
    throw err;
  }
}

/** Runs task(0..count-1) with at most `limit` in flight; stops starting new tasks after the first failure. */
async function inPool<T>(count: number, limit: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < count) {
      const i = next++;
      try {
        results[i] = await task(i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(limit, count)) }, worker));
  const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (rejected) throw rejected.reason;
  return results;
}
