import type { FileHandle } from 'node:fs/promises';
import { fail } from '../../core/errors.js';
import type { PutCondition } from '../backend.js';
import { MAX_PARTS, runMultipartUpload } from './multipart-upload.js';
import type { S3Caller } from './s3-caller.js';

/**
 * Uploads `size` bytes of an open file as a multipart upload. Each part is read into memory just before it is
 * sent, so a retried part resends the same bytes and memory stays at partSize × partConcurrency.
 */
export async function putFileMultipart(
  s3: S3Caller,
  key: string,
  file: FileHandle,
  size: number,
  cond?: PutCondition,
): Promise<string> {
  const partSize = Math.max(s3.tuning.partSize, Math.ceil(size / MAX_PARTS));
  const partCount = Math.max(1, Math.ceil(size / partSize));
  const { sdk, client, bucket } = s3;
  return runMultipartUpload(
    s3,
    key,
    partCount,
    async (uploadId, partNumber) => {
      const start = (partNumber - 1) * partSize;
      const length = Math.min(partSize, size - start);
      const body = Buffer.allocUnsafe(length);
      const { bytesRead } = await file.read(body, 0, length, start);
      if (bytesRead !== length) {
        throw fail('IO', `the file uploaded to ${key} shrank while it was being read`, {
          hint: 'do not modify a file while offshoot uploads it; retry',
        });
      }
      const out = await s3.send({ op: 'UploadPart', key: `${key} part ${partNumber}` }, length, (o) =>
        client.send(
          new sdk.UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: body,
            ContentLength: length,
          }),
          o,
        ),
      );
      return out.ETag ?? '';
    },
    cond,
  );
}
