import { createHash } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { asOffshootError, fail, hasCode } from '../../core/errors.js';
import type { OffshootError } from '../../core/errors.js';
import type { Backend, BackendCapabilities, Body, GetResult, ObjectInfo, PutCondition } from '../backend.js';
import { getEach } from '../get-each.js';
import { fsyncDir, openTemp } from '../local/atomic-write.js';
import { abortAbandonedUploads } from './abandoned-uploads.js';
import { CallDeadline } from './call-deadline.js';
import { CURRENT_ETAG_REFUSED, casProbe } from './cas-probe.js';
import type { CasProbeReport } from './cas-probe.js';
import { copySourceOf } from './copy-source.js';
import { DeleteManyError } from './delete-many-error.js';
import type { DeleteFailure } from './delete-many-error.js';
import { copyMultipart } from './multipart-copy.js';
import { putFileMultipart } from './multipart-file-put.js';
import { watchReads } from './read-watchdog.js';
import { S3Caller } from './s3-caller.js';
import type { EtagForm } from './s3-caller.js';
import { createS3Client, loadS3Sdk } from './s3-client.js';
import type { S3EndpointConfig } from './s3-config.js';
import { attemptsOf, s3Error, s3Timeout } from './s3-errors.js';
import type { S3ErrorContext } from './s3-errors.js';
import { DEFAULT_S3_TUNING, callDeadlineMs } from './s3-tuning.js';
import type { S3Tuning } from './s3-tuning.js';

export { parseS3Spec, s3ConfigFromEnv } from './s3-config.js';
export type { S3EndpointConfig, S3Location } from './s3-config.js';

/** How to open an S3 store: the bucket and prefix, the endpoint settings, and whether to run the CAS probe. */
export interface OpenS3Options extends S3EndpointConfig {
  bucket: string;
  prefix?: string;
  /** Run the conditional-write probe before returning (default true). */
  probe?: boolean;
  /** Overrides of the reference timeouts and sizes (tests use small ones). */
  tuning?: Partial<S3Tuning>;
}

/**
 * How `delete` honours ifMatch: 'server' sends DeleteObject If-Match and trusts the endpoint to enforce it (the
 * probe saw it do so); 'precheck' also compares the ETag with a HEAD first, which narrows but cannot close the
 * race on an endpoint that ignores the header.
 */
export type DeleteGuard = 'server' | 'precheck';

/** DeleteObjects takes at most this many keys per request. */
const DELETE_BATCH = 1000;

const stripQuotes = (etag: string): string => etag.replace(/^"|"$/g, '');
const md5Etag = (bytes: Uint8Array): string => `"${createHash('md5').update(bytes).digest('hex')}"`;

/**
 * An offshoot store in an S3 bucket (AWS S3, MinIO, or another endpoint that enforces conditional writes).
 * Every key is stored under the store prefix; compare-and-swap is If-Match / If-None-Match on PUT.
 */
export class S3Backend implements Backend {
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  private readonly keyPrefix: string;

  constructor(
    private readonly s3: S3Caller,
    prefix: string,
    private readonly deleteGuard: DeleteGuard,
  ) {
    const clean = prefix.replace(/^\/+|\/+$/g, '');
    this.keyPrefix = clean === '' ? '' : `${clean}/`;
    this.name = `s3://${s3.bucket}${clean === '' ? '' : `/${clean}`}`;
    this.capabilities = { conditionalDelete: deleteGuard === 'server', cheapCopy: true };
  }

  /** The If-Match form this backend sends (what the probe found the endpoint enforces). */
  get etagForm(): EtagForm {
    return this.s3.etagForm;
  }

  async get(key: string): Promise<GetResult> {
    const { chunks, etag } = await this.openRead(key);
    const parts: Buffer[] = [];
    for await (const chunk of chunks) parts.push(chunk);
    return { body: Buffer.concat(parts), etag };
  }

  async getStream(key: string): Promise<Readable> {
    const { chunks, release } = await this.openRead(key);
    // A stream destroyed before its first read never runs the generator, so its cleanup is tied to 'close'.
    return Readable.from(chunks, { objectMode: false }).once('close', release);
  }

  async getToFile(key: string, path: string): Promise<number> {
    const dest = resolve(path);
    const { chunks, size, release } = await this.openRead(key);
    let tmp: { path: string; handle: FileHandle };
    try {
      tmp = await openTemp(dirname(dest));
    } catch (err) {
      release();
      throw asOffshootError(err);
    }
    try {
      // Plain awaited writes: a write stream over the handle would keep it referenced and stall close().
      for await (const chunk of chunks) {
        for (let off = 0; off < chunk.length; ) off += (await tmp.handle.write(chunk, off)).bytesWritten;
      }
      await tmp.handle.sync();
      await tmp.handle.close();
      await rename(tmp.path, dest);
      await fsyncDir(dirname(dest));
      return size;
    } catch (err) {
      await tmp.handle.close().catch(() => undefined);
      await rm(tmp.path, { force: true });
      throw asOffshootError(err);
    }
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    const { sdk, client, bucket } = this.s3;
    try {
      const out = await this.s3.send({ op: 'HeadObject', key: this.full(key) }, 0, (o) =>
        client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: this.full(key) }), o),
      );
      return { key, size: out.ContentLength ?? 0, etag: this.etagOf('HeadObject', key, out.ETag) };
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND')) return undefined;
      throw err;
    }
  }

  async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    if (body instanceof Uint8Array)
      return this.putBytes(key, Buffer.from(body.buffer, body.byteOffset, body.byteLength), cond);
    let file: FileHandle;
    try {
      file = await open(body.file, 'r');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw fail(e.code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `cannot read ${body.file} to store ${key}: ${e.message}`, {
        hint: 'check that the source file exists and is readable',
        cause: err,
      });
    }
    try {
      const size = (await file.stat()).size;
      if (size < this.s3.tuning.multipartThreshold) return await this.putBytes(key, await readFile(file), cond);
      // A multipart upload of a large body is expensive to throw away: fail fast on a visible conflict.
      await this.expectCondition(key, cond);
      const etag = await putFileMultipart(this.s3, this.full(key), file, size, cond);
      // Ceph RGW (Pacific) answers CompleteMultipartUpload with an empty ETag; the object's own ETag is then read
      // back. Multipart bodies are data objects under fresh create-only keys, which no other writer replaces.
      if (etag === '') return this.etagOf('HeadObject', key, (await this.stat(key))?.etag);
      return this.etagOf('CompleteMultipartUpload', key, etag);
    } finally {
      await file.close();
    }
  }

  async delete(key: string, opts: { ifMatch?: string } = {}): Promise<void> {
    const { sdk, client, bucket } = this.s3;
    const ifMatch = opts.ifMatch;
    if (ifMatch !== undefined && this.deleteGuard === 'precheck') await this.expectCondition(key, { ifMatch });
    const ctx: S3ErrorContext = {
      op: 'DeleteObject',
      key: this.full(key),
      ...(ifMatch !== undefined ? { cond: 'ifMatch' as const } : {}),
    };
    try {
      await this.s3.send(ctx, 0, (o) =>
        client.send(
          new sdk.DeleteObjectCommand({
            Bucket: bucket,
            Key: this.full(key),
            ...(ifMatch !== undefined ? { IfMatch: this.s3.ifMatch(ifMatch) } : {}),
          }),
          o,
        ),
      );
    } catch (err) {
      // S3 answers 204 for a missing key; an endpoint that says 404 means the same thing.
      if (ifMatch === undefined && hasCode(err, 'NOT_FOUND')) return;
      throw err;
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    const { sdk, client, bucket } = this.s3;
    const unique = [...new Set(keys)];
    const failures: DeleteFailure[] = [];
    for (let i = 0; i < unique.length; i += DELETE_BATCH) {
      const batch = unique.slice(i, i + DELETE_BATCH);
      const out = await this.s3.send(
        { op: 'DeleteObjects', key: `${batch.length} keys from ${this.full(batch[0] ?? '')}` },
        0,
        (o) =>
          client.send(
            new sdk.DeleteObjectsCommand({
              Bucket: bucket,
              Delete: { Objects: batch.map((k) => ({ Key: this.full(k) })), Quiet: true },
            }),
            o,
          ),
      );
      for (const e of out.Errors ?? []) {
        if (e.Code === 'NoSuchKey') continue;
        failures.push({ key: this.strip(e.Key ?? ''), code: e.Code ?? 'Unknown', message: e.Message ?? '' });
      }
    }
    if (failures.length > 0) throw new DeleteManyError(failures, unique.length);
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const { sdk, client, bucket } = this.s3;
    const found: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const out = await this.s3.send({ op: 'ListObjectsV2', key: `${this.full(prefix)}*` }, 0, (o) =>
        client.send(
          new sdk.ListObjectsV2Command({
            Bucket: bucket,
            Prefix: this.full(prefix),
            ...(token !== undefined ? { ContinuationToken: token } : {}),
          }),
          o,
        ),
      );
      for (const obj of out.Contents ?? []) {
        if (obj.Key === undefined || !obj.Key.startsWith(this.keyPrefix)) continue;
        found.push({
          key: this.strip(obj.Key),
          size: obj.Size ?? 0,
          ...(obj.ETag !== undefined ? { etag: obj.ETag } : {}),
        });
      }
      token = out.IsTruncated === true ? out.NextContinuationToken : undefined;
    } while (token !== undefined);
    // Byte order; each key's bytes made once, not once per comparison.
    return found
      .map((o) => ({ o, bytes: Buffer.from(o.key) }))
      .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
      .map(({ o }) => o);
  }

  /** ListObjectsV2 returns keys and sizes together: the same requests as list. */
  async listKeys(prefix: string): Promise<string[]> {
    return (await this.list(prefix)).map((o) => o.key);
  }

  /** One GET per key, a bounded number at a time (each is a round trip; S3 has no batched read). */
  getMany(keys: readonly string[]): Promise<Array<GetResult | undefined>> {
    return getEach(this, keys);
  }

  /**
   * Server-side copy. Create-only sends If-None-Match on the copy; endpoints that ignore it there (moto) are
   * covered by a HEAD of the destination first, which leaves a window in which a concurrent writer can still
   * be overwritten; harmless for offshoot, whose copies go to fresh, randomly named lineages.
   */
  async copy(src: string, dst: string, cond?: { ifNoneMatch: true }): Promise<void> {
    const { sdk, client, bucket, tuning } = this.s3;
    const source = await this.stat(src);
    if (source === undefined) {
      throw fail('NOT_FOUND', `S3 copy ${this.full(src)} -> ${this.full(dst)}: the source does not exist`, {
        hint: 'check the source key, or list the store to see what it holds',
      });
    }
    if (cond !== undefined) await this.expectCondition(dst, cond);
    if (source.size > tuning.copyPartThreshold) {
      await copyMultipart(this.s3, this.full(src), source.etag ?? '', source.size, this.full(dst), cond !== undefined);
      return;
    }
    const ctx: S3ErrorContext = {
      op: 'CopyObject',
      key: `${this.full(src)} -> ${this.full(dst)}`,
      ...(cond !== undefined ? { cond: 'ifNoneMatch' as const } : {}),
    };
    await this.s3.send(ctx, source.size, (o) =>
      client.send(
        new sdk.CopyObjectCommand({
          Bucket: bucket,
          Key: this.full(dst),
          CopySource: copySourceOf(bucket, this.full(src)),
          ...(cond !== undefined ? { IfNoneMatch: '*' } : {}),
        }),
        o,
      ),
    );
  }

  async sweepAbandoned(prefix: string, before: Date): Promise<number> {
    return abortAbandonedUploads(this.s3, this.full(prefix), prefix === '', before);
  }

  async close(): Promise<void> {
    this.s3.client.destroy();
  }

  private full(key: string): string {
    return this.keyPrefix + key;
  }

  private strip(fullKey: string): string {
    return fullKey.startsWith(this.keyPrefix) ? fullKey.slice(this.keyPrefix.length) : fullKey;
  }

  private etagOf(op: string, key: string, etag: string | undefined): string {
    if (etag === undefined || etag === '') {
      throw fail('IO', `S3 ${op} ${this.full(key)}: the endpoint returned no ETag`, {
        hint: 'offshoot needs ETags for compare-and-swap; use AWS S3 or MinIO',
      });
    }
    return etag;
  }

  /** Fails with ALREADY_EXISTS / CAS_CONFLICT when cond visibly does not hold right now (a HEAD, not atomic). */
  private async expectCondition(key: string, cond: PutCondition | undefined): Promise<void> {
    if (cond === undefined) return;
    const now = await this.stat(key);
    if ('ifNoneMatch' in cond) {
      if (now !== undefined) {
        throw fail('ALREADY_EXISTS', `object ${this.full(key)} already exists`, {
          hint: 'create-only writes never replace an object; pick a new key or read the existing one',
        });
      }
    } else if (now?.etag === undefined || stripQuotes(now.etag) !== stripQuotes(cond.ifMatch)) {
      throw fail(
        'CAS_CONFLICT',
        `${this.full(key)} is not at the expected version ${cond.ifMatch} (found ${now?.etag ?? 'no object'})`,
        {
          hint: 'another writer changed it first; re-read the object and apply the change to its current version',
        },
      );
    }
  }

  private async putBytes(key: string, body: Buffer, cond: PutCondition | undefined): Promise<string> {
    const { sdk, client, bucket } = this.s3;
    const condition =
      cond === undefined ? undefined : 'ifNoneMatch' in cond ? ('ifNoneMatch' as const) : ('ifMatch' as const);
    try {
      const out = await this.s3.send(
        { op: 'PutObject', key: this.full(key), ...(condition ? { cond: condition } : {}) },
        body.length,
        (o) =>
          client.send(
            new sdk.PutObjectCommand({
              Bucket: bucket,
              Key: this.full(key),
              Body: body,
              ContentLength: body.length,
              ...(cond === undefined
                ? {}
                : 'ifNoneMatch' in cond
                  ? { IfNoneMatch: '*' }
                  : { IfMatch: this.s3.ifMatch(cond.ifMatch) }),
            }),
            o,
          ),
      );
      return this.etagOf('PutObject', key, out.ETag);
    } catch (err) {
      // A retried conditional put whose first attempt landed (only its answer was lost) meets its own write and
      // is refused; when the object now holds exactly these bytes, the put did succeed.
      if (
        (hasCode(err, 'ALREADY_EXISTS') || hasCode(err, 'CAS_CONFLICT')) &&
        attemptsOf((err as OffshootError).cause) > 1
      ) {
        const now = await this.stat(key);
        if (now?.etag !== undefined && stripQuotes(now.etag) === stripQuotes(md5Etag(body))) return now.etag;
      }
      throw err;
    }
  }

  /**
   * Sends GetObject and returns its body as chunks guarded by the call deadline (extended once the size is known)
   * and the no-progress watchdog; the chunks end with an error, never short, if the body is cut.
   */
  private async openRead(
    key: string,
  ): Promise<{ chunks: AsyncGenerator<Buffer>; etag: string; size: number; release: () => void }> {
    const { sdk, client, bucket, tuning } = this.s3;
    const ctx: S3ErrorContext = { op: 'GetObject', key: this.full(key) };
    const deadline = new CallDeadline(callDeadlineMs(tuning, 0));
    let out;
    try {
      out = await client.send(
        new sdk.GetObjectCommand({ Bucket: bucket, Key: this.full(key) }),
        this.s3.requestOptions(deadline, 0),
      );
    } catch (err) {
      deadline.clear();
      if (deadline.expired) throw s3Timeout(ctx, `no answer within ${callDeadlineMs(tuning, 0)} ms`, err);
      throw s3Error(err, ctx);
    }
    const size = out.ContentLength ?? 0;
    const body = out.Body as Readable;
    let etag: string;
    try {
      etag = this.etagOf('GetObject', key, out.ETag);
    } catch (err) {
      body.destroy();
      deadline.clear();
      throw err;
    }
    deadline.resetFromStart(callDeadlineMs(tuning, size));
    const onDeadline = () =>
      body.destroy(s3Timeout(ctx, `the body did not arrive within ${callDeadlineMs(tuning, size)} ms`));
    deadline.signal.addEventListener('abort', onDeadline, { once: true });
    const release = () => {
      deadline.signal.removeEventListener('abort', onDeadline);
      deadline.clear();
      body.destroy();
    };
    const full = this.full(key);
    async function* chunks(): AsyncGenerator<Buffer> {
      let received = 0;
      try {
        for await (const chunk of watchReads(body, tuning.readIdleMs, () =>
          s3Timeout(ctx, `no data for ${tuning.readIdleMs} ms while reading the body`),
        )) {
          received += chunk.length;
          yield chunk;
        }
      } catch (err) {
        if (deadline.expired && !hasCode(err, 'TIMEOUT'))
          throw s3Timeout(ctx, `the body did not arrive within ${callDeadlineMs(tuning, size)} ms`, err);
        throw s3Error(err, ctx);
      } finally {
        release();
      }
      if (received !== size) {
        throw fail('UNAVAILABLE', `S3 GetObject ${full}: the body ended after ${received} of ${size} bytes`, {
          retryable: true,
          hint: 'the connection was cut mid-transfer; retry',
        });
      }
    }
    return { chunks: chunks(), etag, size, release };
  }
}

/**
 * Opens an S3 store and, unless probe is false, proves that the endpoint enforces conditional writes (see
 * casProbe). The AWS SDK is loaded here, on first use, so that commands on local stores never load it.
 */
export async function openS3Backend(opts: OpenS3Options): Promise<Backend> {
  const tuning: S3Tuning = { ...DEFAULT_S3_TUNING, ...opts.tuning };
  const sdk = await loadS3Sdk();
  const client = createS3Client(sdk, opts, tuning);
  const s3 = new S3Caller(sdk, client, opts.bucket, tuning);
  const prefix = opts.prefix ?? '';
  if (opts.probe === false) return new S3Backend(s3, prefix, 'precheck');
  try {
    const where = (b: Backend) => (opts.endpoint !== undefined ? `${b.name} at ${opts.endpoint}` : b.name);
    const probe = (form: EtagForm) => {
      const b = new S3Backend(s3.withEtagForm(form), prefix, 'server');
      return casProbe(b, where(b));
    };
    // An endpoint that refuses the ETag it returned, quoted, may still enforce it unquoted (Ceph RGW): the
    // probe's verdict on that form decides, so no user has to know which server is behind the endpoint.
    let form: EtagForm = 'as-returned';
    let report: CasProbeReport;
    try {
      report = await probe(form);
    } catch (err) {
      if (!(err instanceof Error && hasCode(err, 'UNSUPPORTED') && err.message.includes(CURRENT_ETAG_REFUSED)))
        throw err;
      form = 'unquoted';
      // Unquoted fails too: the first verdict is the one to report.
      report = await probe(form).catch(() => Promise.reject(err));
    }
    return new S3Backend(s3.withEtagForm(form), prefix, report.conditionalDelete ? 'server' : 'precheck');
  } catch (err) {
    client.destroy();
    throw err;
  }
}
