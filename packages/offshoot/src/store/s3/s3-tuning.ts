/** Timeouts, retry bounds and size thresholds of the S3 backend; tests shrink them to exercise every path quickly. */
export interface S3Tuning {
  /** Longest wait for response headers once the request body is sent (the reference: 60 s). */
  headersTimeoutMs: number;
  /** Fixed part of a call's overall deadline (the reference: 15 min). */
  callBaseMs: number;
  /** The slowest transfer rate a call's deadline allows for, in bytes per second (the reference: 1 MiB/s). */
  callMinBytesPerSec: number;
  /** A streaming read that delivers no byte for this long is abandoned (the reference: 60 s). */
  readIdleMs: number;
  /** Attempts per request, the first included; the SDK retries 5xx, throttling, timeouts and resets, never a 412. */
  maxAttempts: number;
  /** File bodies of at least this many bytes go up as multipart uploads. */
  multipartThreshold: number;
  /** Target part size of a multipart upload (raised when the object would need more than 10,000 parts). */
  partSize: number;
  /** Parts uploaded or copied at once. */
  partConcurrency: number;
  /** Objects larger than this are copied part by part (UploadPartCopy); CopyObject takes at most 5 GiB. */
  copyPartThreshold: number;
  /** Part size of a multipart copy. */
  copyPartSize: number;
}

const MiB = 1024 * 1024;

/** The largest object a single CopyObject may copy. */
export const MAX_COPY_OBJECT_BYTES = 5 * 1024 * MiB;

/** The reference timeouts and sizes. */
export const DEFAULT_S3_TUNING: Readonly<S3Tuning> = {
  headersTimeoutMs: 60_000,
  callBaseMs: 15 * 60_000,
  callMinBytesPerSec: MiB,
  readIdleMs: 60_000,
  maxAttempts: 4,
  multipartThreshold: 16 * MiB,
  partSize: 16 * MiB,
  partConcurrency: 4,
  copyPartThreshold: MAX_COPY_OBJECT_BYTES,
  copyPartSize: 512 * MiB,
};

/** A call's overall deadline: the fixed base plus the time its bytes take at the slowest allowed rate. */
export function callDeadlineMs(tuning: S3Tuning, bytes: number): number {
  return tuning.callBaseMs + Math.ceil((bytes / tuning.callMinBytesPerSec) * 1000);
}

/** How long to wait for a response once `bytes` of request body may still be in flight. */
export function headersDeadlineMs(tuning: S3Tuning, bytes: number): number {
  return tuning.headersTimeoutMs + Math.ceil((bytes / tuning.callMinBytesPerSec) * 1000);
}
