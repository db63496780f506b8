import type { S3Client } from '@aws-sdk/client-s3';
import type { S3SdkModule } from './s3-caller.js';
import type { S3EndpointConfig } from './s3-config.js';
import type { S3Tuning } from './s3-tuning.js';

/** Loads the AWS SDK, silencing its Node-20 end-of-life banner, which would otherwise print on every command. */
export async function loadS3Sdk(): Promise<S3SdkModule> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  return import('@aws-sdk/client-s3');
}

/** Builds the S3 client: credentials from the AWS default chain, checksums only where required, bounded retries. */
export function createS3Client(sdk: S3SdkModule, cfg: S3EndpointConfig, tuning: S3Tuning): S3Client {
  return new sdk.S3Client({
    ...(cfg.region !== undefined ? { region: cfg.region } : {}),
    ...(cfg.endpoint !== undefined ? { endpoint: cfg.endpoint } : {}),
    // Local and third-party endpoints rarely serve virtual-hosted bucket names.
    forcePathStyle: cfg.pathStyle === true || cfg.endpoint !== undefined,
    // The default (WHEN_SUPPORTED) sends aws-chunked bodies with checksum trailers, which several
    // S3-compatible servers reject or store verbatim.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: tuning.maxAttempts,
    retryMode: 'standard',
    requestHandler: {
      connectionTimeout: tuning.headersTimeoutMs,
      requestTimeout: tuning.headersTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
}
