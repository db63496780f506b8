import { hasCode } from '../../core/errors.js';
import type { S3Caller } from './s3-caller.js';

/**
 * When an upload last moved: its latest part's time, or its start when no part has landed. A live upload keeps
 * sending parts, so one whose latest part is older than a grace period of minutes was left by a writer that died.
 */
async function lastActivity(s3: S3Caller, key: string, uploadId: string, initiated: Date): Promise<number> {
  const { sdk, client, bucket } = s3;
  let latest = initiated.getTime();
  let marker: string | undefined;
  do {
    const page = await s3.send({ op: 'ListParts', key }, 0, (o) =>
      client.send(
        new sdk.ListPartsCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          ...(marker !== undefined ? { PartNumberMarker: marker } : {}),
        }),
        o,
      ),
    );
    for (const p of page.Parts ?? []) latest = Math.max(latest, p.LastModified?.getTime() ?? 0);
    marker = page.IsTruncated === true ? page.NextPartNumberMarker : undefined;
  } while (marker !== undefined);
  return latest;
}

/**
 * Aborts the incomplete multipart uploads under `prefix` (full keys; with `topOnly`, only those of keys directly
 * under it) that have not moved since before `before`, freeing the parts a writer that died left: S3 keeps them, and
 * bills them, until an abort (or a bucket lifecycle rule). Returns how many were aborted.
 */
export async function abortAbandonedUploads(
  s3: S3Caller,
  prefix: string,
  topOnly: boolean,
  before: Date,
): Promise<number> {
  const { sdk, client, bucket } = s3;
  let aborted = 0;
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  do {
    const page = await s3.send({ op: 'ListMultipartUploads', key: `${prefix}*` }, 0, (o) =>
      client.send(
        new sdk.ListMultipartUploadsCommand({
          Bucket: bucket,
          Prefix: prefix,
          ...(topOnly ? { Delimiter: '/' } : {}),
          ...(keyMarker !== undefined ? { KeyMarker: keyMarker } : {}),
          ...(uploadIdMarker !== undefined ? { UploadIdMarker: uploadIdMarker } : {}),
        }),
        o,
      ),
    );
    for (const u of page.Uploads ?? []) {
      const { Key: key, UploadId: uploadId, Initiated: initiated } = u;
      if (key === undefined || uploadId === undefined || initiated === undefined) continue;
      if (initiated >= before) continue;
      try {
        if ((await lastActivity(s3, key, uploadId, initiated)) >= before.getTime()) continue;
        await s3.send({ op: 'AbortMultipartUpload', key }, 0, (o) =>
          client.send(new sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }), o),
        );
        aborted++;
      } catch (err) {
        // Completed or aborted meanwhile: nothing left to free.
        if (!hasCode(err, 'NOT_FOUND')) throw err;
      }
    }
    const more = page.IsTruncated === true;
    keyMarker = more ? page.NextKeyMarker : undefined;
    uploadIdMarker = more ? page.NextUploadIdMarker : undefined;
  } while (keyMarker !== undefined);
  return aborted;
}
