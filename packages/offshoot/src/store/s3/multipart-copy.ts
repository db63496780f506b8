import { MAX_PARTS, runMultipartUpload } from './multipart-upload.js';
import type { S3Caller } from './s3-caller.js';
import { copySourceOf } from './copy-source.js';

/**
 * Copies an object of `size` bytes server-side, part by part (UploadPartCopy), for objects beyond CopyObject's
 * 5 GiB limit. Every part names the source's ETag, so a source replaced mid-copy fails the copy instead of
 * mixing two versions; create-only is enforced on completion.
 */
export async function copyMultipart(
  s3: S3Caller,
  srcKey: string,
  srcEtag: string,
  size: number,
  dstKey: string,
  createOnly: boolean,
): Promise<void> {
  const partSize = Math.max(s3.tuning.copyPartSize, Math.ceil(size / MAX_PARTS));
  const partCount = Math.max(1, Math.ceil(size / partSize));
  const { sdk, client, bucket } = s3;
  const source = copySourceOf(bucket, srcKey);
  await runMultipartUpload(
    s3,
    dstKey,
    partCount,
    async (uploadId, partNumber) => {
      const start = (partNumber - 1) * partSize;
      const end = Math.min(size, start + partSize) - 1;
      const out = await s3.send(
        { op: 'UploadPartCopy', key: `${srcKey} -> ${dstKey} part ${partNumber}`, cond: 'ifMatch' },
        end - start + 1,
        (o) =>
          client.send(
            new sdk.UploadPartCopyCommand({
              Bucket: bucket,
              Key: dstKey,
              UploadId: uploadId,
              PartNumber: partNumber,
              CopySource: source,
              CopySourceRange: `bytes=${start}-${end}`,
              CopySourceIfMatch: s3.ifMatch(srcEtag),
            }),
            o,
          ),
      );
      return out.CopyPartResult?.ETag ?? '';
    },
    createOnly ? { ifNoneMatch: true } : undefined,
  );
}
