// Shared set-up for the S3 suites: the test endpoint from the environment, fresh buckets created and torn down
// with the AWS SDK directly (never through the backend under test), and the fault proxy.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { S3Client } from '@aws-sdk/client-s3';

/** The S3 endpoint the suites run against (scripts/with-s3-server.sh sets it), or undefined. */
export const S3_ENDPOINT = process.env.OFFSHOOT_TEST_S3_ENDPOINT || undefined;

/** Which server is behind S3_ENDPOINT: `moto` (AWS S3 semantics) or `rgw` (Ceph's RADOS Gateway). */
export const S3_SERVER: 'moto' | 'rgw' = process.env.OFFSHOOT_TEST_S3_SERVER === 'rgw' ? 'rgw' : 'moto';

/** Whether the test server enforces If-Match on DeleteObject (moto does; RGW 16 ignores it, and the probe sees that). */
export const SERVER_ENFORCES_CONDITIONAL_DELETE = S3_SERVER === 'moto';

/**
 * When no test endpoint is set, registers one test that fails on CI (a silent skip would hide a lost suite)
 * and is skipped elsewhere; returns true when the caller should register nothing else.
 */
export function s3Unavailable(suite: string): boolean {
  if (S3_ENDPOINT !== undefined) return false;
  const why = `${suite}: OFFSHOOT_TEST_S3_ENDPOINT is not set; run the tests through scripts/with-s3-server.sh (make test does)`;
  if (process.env.CI === 'true') {
    it(suite, () => {
      throw new Error(why);
    });
  } else {
    it(suite, { skip: why }, () => undefined);
  }
  return true;
}

let admin: Promise<{ sdk: typeof import('@aws-sdk/client-s3'); client: S3Client }> | undefined;

/** An SDK client for bucket set-up, talking straight to the test endpoint. */
export function adminClient(): Promise<{ sdk: typeof import('@aws-sdk/client-s3'); client: S3Client }> {
  admin ??= (async () => {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    const sdk = await import('@aws-sdk/client-s3');
    const client = new sdk.S3Client({
      endpoint: S3_ENDPOINT,
      region: 'us-east-1',
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    return { sdk, client };
  })();
  return admin;
}

/** A test bucket: its name, and a teardown that empties and removes it. */
export interface TestBucket {
  name: string;
  remove: () => Promise<void>;
}

/** Creates a fresh, uniquely named bucket. */
export async function createTestBucket(): Promise<TestBucket> {
  const { sdk, client } = await adminClient();
  const name = `offshoot-test-${randomBytes(6).toString('hex')}`;
  await client.send(new sdk.CreateBucketCommand({ Bucket: name }));
  return { name, remove: () => removeBucket(name) };
}

/** Every key in bucket, unprefixed, in listing order. */
export async function bucketKeys(bucket: string): Promise<string[]> {
  const { sdk, client } = await adminClient();
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const out = await client.send(new sdk.ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const o of out.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
    token = out.IsTruncated === true ? out.NextContinuationToken : undefined;
  } while (token !== undefined);
  return keys;
}

/** Multipart uploads still open in bucket (an aborted or completed upload is not listed). */
export async function openUploads(bucket: string): Promise<{ key: string; uploadId: string }[]> {
  const { sdk, client } = await adminClient();
  const out = await client.send(new sdk.ListMultipartUploadsCommand({ Bucket: bucket }));
  return (out.Uploads ?? []).map((u) => ({ key: u.Key ?? '', uploadId: u.UploadId ?? '' }));
}

async function removeBucket(bucket: string): Promise<void> {
  const { sdk, client } = await adminClient();
  for (const u of await openUploads(bucket)) {
    await client.send(new sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: u.key, UploadId: u.uploadId }));
  }
  const keys = await bucketKeys(bucket);
  for (let i = 0; i < keys.length; i += 1000) {
    await client.send(
      new sdk.DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) },
      }),
    );
  }
  await client.send(new sdk.DeleteBucketCommand({ Bucket: bucket }));
}

/** One request the fault proxy saw, and what it did with it ('forward' or the fault's kind). */
export interface ProxiedRequest {
  method: string;
  path: string;
  query: string;
  action: string;
}

/** A fault rule of scripts/s3-fault-proxy.mjs (see the header of that script). */
export interface ProxyRule {
  match?: { method?: string; path?: string; query?: string };
  action:
    | { stripHeaders: string[] }
    | { status: number; code?: string; body?: string }
    | { cutAfterBytes: number }
    | { dropResponse: true }
    | { stallHeadersMs: number }
    | { holdHeaders: true }
    | { holdBody: { afterBytes: number } };
  times?: number;
}

/** A running fault proxy in front of the test endpoint. */
export interface FaultProxy {
  endpoint: string;
  setRules: (rules: ProxyRule[]) => Promise<void>;
  log: () => Promise<ProxiedRequest[]>;
  clearLog: () => Promise<void>;
  /** Answers every response a holdHeaders rule holds; resolves with how many there were. */
  release: () => Promise<number>;
  stop: () => Promise<void>;
}

const PROXY = fileURLToPath(new URL('../../../../scripts/s3-fault-proxy.mjs', import.meta.url));

/** Starts scripts/s3-fault-proxy.mjs as a child process in front of the test endpoint. */
export async function startFaultProxy(args: string[] = []): Promise<FaultProxy> {
  const child = spawn(process.execPath, [PROXY, S3_ENDPOINT ?? '', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^listening (\d+)\n/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`s3-fault-proxy exited with ${code} before listening`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${endpoint}/__proxy/${path}`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`s3-fault-proxy ${method} ${path}: ${res.status}`);
    return res;
  };
  return {
    endpoint,
    setRules: async (rules) => void (await control('PUT', 'rules', rules)),
    log: async () => (await (await control('GET', 'log')).json()) as ProxiedRequest[],
    clearLog: async () => void (await control('DELETE', 'log')),
    release: async () => ((await (await control('POST', 'release')).json()) as { released: number }).released,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
