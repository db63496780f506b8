import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { CallDeadline } from './call-deadline.js';
import { s3Error, s3Timeout } from './s3-errors.js';
import type { S3ErrorContext } from './s3-errors.js';
import { callDeadlineMs, headersDeadlineMs } from './s3-tuning.js';
import type { S3Tuning } from './s3-tuning.js';

/** The AWS SDK module, loaded on demand so that local-store commands never pay for it. */
export type S3SdkModule = typeof S3Sdk;

/** Options handed to `client.send` for one request. */
export interface RequestOptions {
  abortSignal: AbortSignal;
  /** Per-attempt limit on waiting for response headers (the upload of the body included). */
  requestTimeout: number;
}

/**
 * How an If-Match ETag goes on the wire: 'as-returned' sends it exactly as the endpoint gave it (quoted, as AWS
 * S3 and moto expect); 'unquoted' strips the quotes (Ceph RGW refuses a quoted If-Match). The CAS probe finds it.
 */
export type EtagForm = 'as-returned' | 'unquoted';

/** Sends S3 requests for one bucket under offshoot's deadlines, turning every failure into an OffshootError. */
export class S3Caller {
  constructor(
    readonly sdk: S3SdkModule,
    readonly client: S3Client,
    readonly bucket: string,
    readonly tuning: S3Tuning,
    readonly etagForm: EtagForm = 'as-returned',
  ) {}

  /** The same caller with another If-Match form (the probe's finding). */
  withEtagForm(form: EtagForm): S3Caller {
    return new S3Caller(this.sdk, this.client, this.bucket, this.tuning, form);
  }

  /** The If-Match header value for an ETag, in the form this endpoint enforces. */
  ifMatch(etag: string): string {
    return this.etagForm === 'unquoted' ? etag.replace(/^"|"$/g, '') : etag;
  }

  /** Runs one request (with the SDK's bounded retries) that sends bodyBytes and expects a small answer. */
  async send<T>(ctx: S3ErrorContext, bodyBytes: number, run: (opts: RequestOptions) => Promise<T>): Promise<T> {
    const ms = callDeadlineMs(this.tuning, bodyBytes);
    const deadline = new CallDeadline(ms);
    try {
      return await run(this.requestOptions(deadline, bodyBytes));
    } catch (err) {
      if (deadline.expired) throw s3Timeout(ctx, `no answer within ${ms} ms`, err);
      throw s3Error(err, ctx);
    } finally {
      deadline.clear();
    }
  }

  /** Request options bound to a deadline the caller manages (streaming reads extend it once the size is known). */
  requestOptions(deadline: CallDeadline, bodyBytes: number): RequestOptions {
    return { abortSignal: deadline.signal, requestTimeout: headersDeadlineMs(this.tuning, bodyBytes) };
  }
}
