import { fail } from '../../core/errors.js';

/** Where an S3 store lives: the bucket, a key prefix inside it, and how to reach the endpoint. */
export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing slashes; '' for the bucket root. */
  prefix: string;
}

/** Endpoint settings from the environment; credentials are never read here (the AWS default chain does that). */
export interface S3EndpointConfig {
  endpoint?: string;
  region?: string;
  pathStyle?: boolean;
}

const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses `s3://bucket[/prefix]`; the prefix loses its leading and trailing slashes. */
export function parseS3Spec(spec: string): S3Location {
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/i.exec(spec);
  if (!m) throw fail('USAGE', `not an S3 store spec: ${spec}`, { hint: 'write the store as s3://bucket[/prefix]' });
  const bucket = m[1] ?? '';
  if (!BUCKET_RE.test(bucket)) {
    throw fail('USAGE', `invalid S3 bucket name ${JSON.stringify(bucket)} in ${spec}`, {
      hint: 'bucket names are 3-63 characters of a-z, 0-9, "." and "-": write the store as s3://bucket[/prefix]',
    });
  }
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((seg, _i, all) => seg === '' && all.length > 1)) {
    throw fail('USAGE', `S3 store prefix in ${spec} has an empty segment`, {
      hint: 'remove the doubled "/" from the prefix',
    });
  }
  return { bucket, prefix };
}

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);

/** Reads OFFSHOOT_S3_ENDPOINT, OFFSHOOT_S3_REGION (`auto` when an endpoint is set without one) and OFFSHOOT_S3_PATH_STYLE. */
export function s3ConfigFromEnv(env: NodeJS.ProcessEnv = process.env): S3EndpointConfig {
  const endpoint = env.OFFSHOOT_S3_ENDPOINT?.trim() || undefined;
  const region = env.OFFSHOOT_S3_REGION?.trim() || (endpoint !== undefined ? 'auto' : undefined);
  const pathStyle = TRUE_WORDS.has((env.OFFSHOOT_S3_PATH_STYLE ?? '').trim().toLowerCase());
  const config: S3EndpointConfig = { pathStyle };
  if (endpoint !== undefined) config.endpoint = endpoint;
  if (region !== undefined) config.region = region;
  return config;
}
