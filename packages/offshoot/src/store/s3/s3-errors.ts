import { OffshootError, fail } from '../../core/errors.js';

/** What a failed S3 request was doing, so its error can be classified and explained. */
export interface S3ErrorContext {
  /** The S3 operation, e.g. 'PutObject'. */
  op: string;
  /** The object key (store prefix included) or a description of the keys. */
  key: string;
  /** The precondition the request carried: a 412 or a 404 means something different under each. */
  cond?: 'ifNoneMatch' | 'ifMatch';
}

interface SdkErrorShape {
  name?: string;
  message?: string;
  code?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

const THROTTLING = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequests',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestThrottledException',
]);
const NETWORK = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
const TIMEOUTS = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'ETIMEDOUT', 'ESOCKETTIMEDOUT']);
const ACCESS = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'AllAccessDisabled',
]);

/** The HTTP status of an SDK error, when the server answered at all. */
export function httpStatusOf(err: unknown): number | undefined {
  return (err as SdkErrorShape | undefined)?.$metadata?.httpStatusCode;
}

/** How many attempts the SDK made before giving up (1 when it did not retry). */
export function attemptsOf(err: unknown): number {
  return (err as SdkErrorShape | undefined)?.$metadata?.attempts ?? 1;
}

/** The TIMEOUT raised when a call outlives its deadline or a read stalls. */
export function s3Timeout(ctx: S3ErrorContext, what: string, cause?: unknown): OffshootError {
  return fail('TIMEOUT', `S3 ${ctx.op} ${ctx.key}: ${what}`, {
    retryable: true,
    cause,
    hint: 'the endpoint is slow or unreachable; retry, and check the network path to OFFSHOOT_S3_ENDPOINT or AWS',
  });
}

/** Translates an AWS SDK or network error into an OffshootError with a stable code, retryability and a hint. */
export function s3Error(err: unknown, ctx: S3ErrorContext): OffshootError {
  if (err instanceof OffshootError) return err;
  const e = (err ?? {}) as SdkErrorShape;
  const name = e.name ?? '';
  const code = e.Code ?? e.code ?? '';
  const status = httpStatusOf(err);
  const detail =
    e.message && e.message !== name && e.message !== 'UnknownError' ? e.message : name || code || 'unknown error';
  const tag = [name !== 'Error' ? name : code, status].filter((x) => x !== undefined && x !== '').join(' ');
  const msg = `S3 ${ctx.op} ${ctx.key}: ${detail}${tag ? ` (${tag})` : ''}`;
  const opts = (hint: string, retryable = false) => ({ hint, retryable, cause: err });

  if (name === 'NoSuchBucket' || code === 'NoSuchBucket') {
    return fail(
      'NOT_FOUND',
      msg,
      opts('the bucket does not exist: create it, or check the store spec and OFFSHOOT_S3_ENDPOINT'),
    );
  }
  if (status === 412 || name === 'PreconditionFailed') {
    if (ctx.cond === 'ifNoneMatch') {
      return fail(
        'ALREADY_EXISTS',
        msg,
        opts('create-only writes never replace an object; pick a new key or read the existing one'),
      );
    }
    return fail(
      'CAS_CONFLICT',
      msg,
      opts('another writer changed it first; re-read the object and apply the change to its current version'),
    );
  }
  if (status === 409 && ctx.cond !== undefined) {
    return fail(
      'CAS_CONFLICT',
      msg,
      opts('a concurrent conditional write was in progress; re-read the object and retry', true),
    );
  }
  if (status === 404 || name === 'NoSuchKey' || name === 'NotFound') {
    if (ctx.cond === 'ifMatch') {
      return fail(
        'CAS_CONFLICT',
        msg,
        opts('the object was deleted by another writer; re-read it and apply the change to its current state'),
      );
    }
    return fail('NOT_FOUND', msg, opts('check the key, or list the store to see what it holds'));
  }
  if (THROTTLING.has(name) || THROTTLING.has(code) || status === 429 || status === 503) {
    return fail('UNAVAILABLE', msg, opts('the endpoint is throttling or unavailable; retry after a pause', true));
  }
  // Checked before timeouts: the SDK renames a reset connection (ECONNRESET, EPIPE) to TimeoutError.
  if (NETWORK.has(code) || NETWORK.has(name) || /socket hang up|ECONNRESET|EPIPE/.test(e.message ?? '')) {
    return fail(
      'UNAVAILABLE',
      msg,
      opts('the connection to the endpoint failed; retry, and check OFFSHOOT_S3_ENDPOINT and the network', true),
    );
  }
  if (TIMEOUTS.has(name) || TIMEOUTS.has(code)) {
    return fail(
      'TIMEOUT',
      msg,
      opts(
        'the endpoint is slow or unreachable; retry, and check the network path to OFFSHOOT_S3_ENDPOINT or AWS',
        true,
      ),
    );
  }
  if (status === 501 || name === 'NotImplemented') {
    return fail(
      'UNSUPPORTED',
      msg,
      opts('this S3-compatible endpoint lacks a feature offshoot needs; use AWS S3 or MinIO'),
    );
  }
  if (status !== undefined && status >= 500) {
    return fail('UNAVAILABLE', msg, opts('the endpoint had an internal error; retry', true));
  }
  if (status === 403 || ACCESS.has(name) || ACCESS.has(code)) {
    return fail(
      'IO',
      msg,
      opts('S3 refused access: check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID) and the bucket policy'),
    );
  }
  if (name === 'RequestTimeTooSkewed') {
    return fail('IO', msg, opts("this machine's clock is off; sync it (NTP) and retry"));
  }
  if (name === 'CredentialsProviderError') {
    return fail(
      'IO',
      msg,
      opts('no AWS credentials found: set AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'),
    );
  }
  if (/region is missing/i.test(e.message ?? '')) {
    return fail('USAGE', msg, opts('set OFFSHOOT_S3_REGION or AWS_REGION'));
  }
  return fail(
    'IO',
    msg,
    opts('the S3 request failed; see the message, and check the store spec and OFFSHOOT_S3_ENDPOINT'),
  );
}
