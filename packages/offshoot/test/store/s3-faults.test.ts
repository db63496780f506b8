import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, it } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import type { ErrorCode, OffshootError } from '../../src/core/errors.js';
import type { Backend } from '../../src/store/backend.js';
import type { DeleteManyError } from '../../src/store/s3/delete-many-error.js';
import { openS3Backend } from '../../src/store/s3/s3-backend.js';
import type { S3Tuning } from '../../src/store/s3/s3-tuning.js';
import { countingBackend, faultBackend } from './fault-backend.js';
import {
  S3_ENDPOINT,
  adminClient,
  bucketKeys,
  createTestBucket,
  openUploads,
  s3Unavailable,
  startFaultProxy,
} from './s3-test-env.js';
import type { FaultProxy, TestBucket } from './s3-test-env.js';

const MiB = 1024 * 1024;
const region = 'us-east-1';
// Few attempts and a short read watchdog keep the fault paths quick; the header timeout stays generous because
// other suites share the single-threaded test server, and only the tests that expect a timeout shorten it. The
// watchdog still allows a loaded server a second between the chunks of a healthy body.
const FAST: Partial<S3Tuning> = { maxAttempts: 3, headersTimeoutMs: 5_000, readIdleMs: 1_000, callBaseMs: 30_000 };
/**
 * A stall no test outlives (the proxy ends it when the client goes): only the timeout under test can end the wait,
 * so a loaded machine can slow a test down but never make a stall end first. Time bounds stay far below it.
 */
const STALL_MS = 120_000;

async function rejectsWith(p: Promise<unknown>, code: ErrorCode): Promise<OffshootError> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => {
    caught = err;
    return hasCode(err, code);
  });
  const err = caught as OffshootError;
  assert.ok((err.hint ?? '').length > 0, `${code} carries a hint`);
  return err;
}

if (!s3Unavailable('S3 backend faults')) {
  describe('S3 backend faults', () => {
    let bucket: TestBucket;
    let proxy: FaultProxy;
    let scratch: string;
    let n = 0;
    // Each test gets its own prefix in one bucket, reached through the proxy.
    const open = (tuning: Partial<S3Tuning> = {}, probe = true) =>
      openS3Backend({
        probe,
        bucket: bucket.name,
        prefix: `t${++n}`,
        endpoint: proxy.endpoint,
        region,
        tuning: { ...FAST, ...tuning },
      });
    const requests = async (method: string, pathPart: string) =>
      (await proxy.log()).filter((r) => r.method === method && r.path.includes(pathPart));

    before(async () => {
      bucket = await createTestBucket();
      proxy = await startFaultProxy();
      scratch = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    });
    after(async () => {
      await proxy?.stop();
      await bucket?.remove();
      rmSync(scratch, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await proxy.setRules([]);
      await proxy.clearLog();
    });

    async function withBackend(
      fn: (b: Backend) => Promise<void>,
      tuning?: Partial<S3Tuning>,
      probe = true,
    ): Promise<void> {
      const b = await open(tuning, probe);
      await proxy.clearLog();
      try {
        await fn(b);
      } finally {
        await b.close();
      }
    }

    it('a persistent 503 SlowDown is retried maxAttempts times, then surfaces as retryable UNAVAILABLE', () =>
      withBackend(async (b) => {
        await proxy.setRules([
          { match: { method: 'PUT', path: '/refs/db/main' }, action: { status: 503, code: 'SlowDown' } },
        ]);
        const err = await rejectsWith(b.put('refs/db/main', Buffer.from('v1')), 'UNAVAILABLE');
        assert.equal(err.retryable, true);
        assert.match(err.message, /SlowDown/);
        assert.equal((await requests('PUT', '/refs/db/main')).length, 3);
        await proxy.setRules([]);
        assert.equal(await b.stat('refs/db/main'), undefined);
      }));

    it('a persistent 500 on a read is retried a bounded number of times, then UNAVAILABLE', () =>
      withBackend(async (b) => {
        await b.put('obj', Buffer.from('x'));
        await proxy.setRules([
          { match: { method: 'GET', path: '/obj' }, action: { status: 500, code: 'InternalError' } },
        ]);
        const err = await rejectsWith(b.get('obj'), 'UNAVAILABLE');
        assert.equal(err.retryable, true);
        assert.equal((await requests('GET', '/obj')).length, 3);
      }));

    it('a transient 503 is retried transparently', () =>
      withBackend(async (b) => {
        await proxy.setRules([
          { match: { method: 'PUT', path: '/data/x' }, action: { status: 503, code: 'ServiceUnavailable' }, times: 2 },
        ]);
        const etag = await b.put('data/x', Buffer.from('payload'), { ifNoneMatch: true });
        assert.equal((await requests('PUT', '/data/x')).length, 3);
        assert.equal((await b.get('data/x')).etag, etag);
      }));

    it('a 412 is final: never retried', () =>
      withBackend(async (b) => {
        await b.put('refs/db/main', Buffer.from('v1'), { ifNoneMatch: true });
        await proxy.clearLog();
        await rejectsWith(b.put('refs/db/main', Buffer.from('v2'), { ifNoneMatch: true }), 'ALREADY_EXISTS');
        await rejectsWith(
          b.put('refs/db/main', Buffer.from('v3'), { ifMatch: '"0123456789abcdef0123456789abcdef"' }),
          'CAS_CONFLICT',
        );
        assert.equal((await requests('PUT', '/refs/db/main')).length, 2);
      }));

    it('409 ConditionalRequestConflict is a retryable CAS_CONFLICT', () =>
      withBackend(async (b) => {
        const e1 = await b.put('refs/db/main', Buffer.from('v1'));
        await proxy.clearLog();
        await proxy.setRules([
          { match: { method: 'PUT' }, action: { status: 409, code: 'ConditionalRequestConflict' } },
        ]);
        const err = await rejectsWith(b.put('refs/db/main', Buffer.from('v2'), { ifMatch: e1 }), 'CAS_CONFLICT');
        assert.equal(err.retryable, true);
        assert.equal((await requests('PUT', '/refs/db/main')).length, 1);
      }));

    it('a connection dropped mid-upload leaves the previous version and no partial object', () =>
      withBackend(async (b) => {
        const v1 = randomBytes(300_000);
        await b.put('data/obj', v1);
        await proxy.clearLog();
        await proxy.setRules([{ match: { method: 'PUT', path: '/data/' }, action: { cutAfterBytes: 100_000 } }]);
        const err = await rejectsWith(b.put('data/obj', randomBytes(300_000)), 'UNAVAILABLE');
        assert.equal(err.retryable, true);
        assert.equal((await requests('PUT', '/data/obj')).length, 3);
        await rejectsWith(b.put('data/new', randomBytes(300_000), { ifNoneMatch: true }), 'UNAVAILABLE');
        await proxy.setRules([]);
        assert.ok((await b.get('data/obj')).body.equals(v1));
        assert.deepEqual(
          (await b.list('')).map((o) => [o.key, o.size]),
          [['data/obj', v1.length]],
        );
      }));

    it('a connection dropped mid-part aborts the multipart upload: nothing visible, no upload left open', () =>
      withBackend(
        async (b) => {
          const file = path.join(scratch, 'big.bin');
          writeFileSync(file, randomBytes(11 * MiB));
          await proxy.setRules([{ match: { method: 'PUT', query: 'partNumber=2' }, action: { cutAfterBytes: MiB } }]);
          const err = await rejectsWith(b.put('data/big.ltx', { file }, { ifNoneMatch: true }), 'UNAVAILABLE');
          assert.equal(err.retryable, true);
          const log = await proxy.log();
          assert.equal(
            log.filter((r) => r.query.includes('partNumber=2')).length,
            3,
            'part 2 was tried maxAttempts times',
          );
          // An abort whose first attempt fails (a loaded server, a reused socket the cut left behind) is retried: at
          // least one was sent, and none is left open below.
          assert.ok(
            log.some((r) => r.method === 'DELETE' && r.query.includes('uploadId=')),
            'the upload was aborted',
          );
          assert.equal(
            log.filter((r) => r.method === 'POST' && r.query.includes('uploadId=')).length,
            0,
            'never completed',
          );
          await proxy.setRules([]);
          assert.equal(await b.stat('data/big.ltx'), undefined);
          assert.deepEqual(await openUploads(bucket.name), []);
          // The same upload goes through once the network behaves.
          const etag = await b.put('data/big.ltx', { file }, { ifNoneMatch: true });
          assert.match(etag, /-3"$/, 'a three-part multipart ETag');
          assert.equal((await b.stat('data/big.ltx'))?.size, 11 * MiB);
        },
        { multipartThreshold: 5 * MiB, partSize: 5 * MiB, partConcurrency: 2 },
      ));

    it('a create-only multipart upload loses at completion to an object that appeared mid-upload', () =>
      withBackend(
        async (b) => {
          const file = path.join(scratch, 'race.bin');
          writeFileSync(file, randomBytes(6 * MiB));
          await proxy.setRules([
            { match: { method: 'PUT', query: 'partNumber=1' }, action: { holdHeaders: true }, times: 1 },
          ]);
          const pending = b.put('data/race.ltx', { file }, { ifNoneMatch: true });
          // While part 1's answer is held back, another writer creates the key; only then is the answer let go.
          while (!(await proxy.log()).some((r) => r.query.includes('partNumber=1'))) await sleep(10);
          const { sdk, client } = await adminClient();
          await client.send(
            new sdk.PutObjectCommand({ Bucket: bucket.name, Key: `t${n}/data/race.ltx`, Body: 'the other writer' }),
          );
          while ((await proxy.release()) === 0) await sleep(10);
          await rejectsWith(pending, 'ALREADY_EXISTS');
          assert.equal((await b.get('data/race.ltx')).body.toString(), 'the other writer');
          assert.deepEqual(await openUploads(bucket.name), [], 'the losing upload was aborted');
        },
        { multipartThreshold: 5 * MiB, partSize: 5 * MiB, headersTimeoutMs: 20_000 },
      ));

    it('a put whose answer was lost, then retried into its own write, still succeeds', () =>
      withBackend(async (b) => {
        await proxy.setRules([
          { match: { method: 'PUT', path: '/refs/db/main' }, action: { dropResponse: true }, times: 1 },
        ]);
        const body = Buffer.from('{"generation":1}');
        const etag = await b.put('refs/db/main', body, { ifNoneMatch: true });
        assert.equal((await requests('PUT', '/refs/db/main')).length, 2, 'the first attempt landed; the retry met it');
        assert.deepEqual(await b.get('refs/db/main'), { body, etag });

        await proxy.setRules([
          { match: { method: 'PUT', path: '/refs/db/main' }, action: { dropResponse: true }, times: 1 },
        ]);
        const next = Buffer.from('{"generation":2}');
        const etag2 = await b.put('refs/db/main', next, { ifMatch: etag });
        assert.deepEqual(await b.get('refs/db/main'), { body: next, etag: etag2 });
      }));

    it('response headers that never come time out (TIMEOUT, retryable) after bounded attempts', () =>
      withBackend(async (b) => {
        await b.put('slow', Buffer.from('x'));
        // Same store, no probe: only the HEAD under test runs with the short header timeout.
        const impatient = await openS3Backend({
          bucket: bucket.name,
          prefix: `t${n}`,
          endpoint: proxy.endpoint,
          region,
          probe: false,
          tuning: { ...FAST, headersTimeoutMs: 300 },
        });
        try {
          await proxy.setRules([{ match: { method: 'HEAD', path: '/slow' }, action: { stallHeadersMs: STALL_MS } }]);
          await proxy.clearLog();
          const started = Date.now();
          const err = await rejectsWith(impatient.stat('slow'), 'TIMEOUT');
          assert.equal(err.retryable, true);
          assert.doesNotMatch(err.message, /no answer within/, 'the header timeout gave up, not the call deadline');
          assert.ok(Date.now() - started < STALL_MS / 2, `gave up after ${Date.now() - started} ms`);
          assert.equal((await requests('HEAD', '/slow')).length, 3);
        } finally {
          await impatient.close();
        }
      }));

    it('a call that outlives its overall deadline is abandoned with TIMEOUT', () =>
      withBackend(
        async (b) => {
          await proxy.setRules([{ match: { method: 'PUT', path: '/late' }, action: { stallHeadersMs: STALL_MS } }]);
          const started = Date.now();
          const err = await rejectsWith(b.put('late', Buffer.from('x')), 'TIMEOUT');
          assert.match(err.message, /no answer within 300\d ms/);
          assert.ok(Date.now() - started < STALL_MS / 4, `abandoned after ${Date.now() - started} ms`);
        },
        // Opened without the compare-and-swap probe, the deadline bounds only the call under test: a loaded machine's
        // emulator could take longer than it to answer the probe's own calls.
        { headersTimeoutMs: STALL_MS / 2, callBaseMs: 3000 },
        false,
      ));

    it('a body that stops mid-stream trips the read watchdog; getToFile then leaves no file behind', () =>
      withBackend(async (b) => {
        const content = randomBytes(2 * MiB);
        await b.put('stalls', content);
        // The proxy holds the rest of the body until the client goes, so nothing but the watchdog can end a read.
        const stall = { match: { method: 'GET', path: '/stalls' }, action: { holdBody: { afterBytes: 256 * 1024 } } };
        await proxy.setRules([stall]);
        const err = await rejectsWith(b.get('stalls'), 'TIMEOUT');
        assert.match(err.message, new RegExp(`no data for ${FAST.readIdleMs} ms`));
        assert.equal(err.retryable, true);

        const dir = path.join(scratch, 'watchdog');
        await proxy.setRules([stall]);
        await rejectsWith(b.getToFile('stalls', path.join(dir, 'out.bin')), 'TIMEOUT');
        assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], []);

        await proxy.setRules([stall]);
        const stream = await b.getStream('stalls');
        await assert.rejects(
          (async () => {
            for await (const chunk of stream) void chunk;
          })(),
          (e: unknown) => hasCode(e, 'TIMEOUT'),
          'the held stream fails TIMEOUT',
        );
      }));

    it('a slow consumer is not mistaken for a stalled connection', () =>
      withBackend(async (b) => {
        const content = randomBytes(MiB);
        await b.put('slow-reader', content);
        const stream = await b.getStream('slow-reader');
        const parts: Buffer[] = [];
        let pauses = 0;
        for await (const chunk of stream) {
          parts.push(chunk as Buffer);
          if (pauses < 3) {
            pauses++;
            // Longer than the watchdog's limit: only time spent waiting on the connection may count against it.
            await sleep((FAST.readIdleMs ?? 0) * 1.5);
          }
        }
        assert.ok(Buffer.concat(parts).equals(content));
      }));

    it('deleteMany sends batches of 1000 and reports per-key failures as a typed error', () =>
      withBackend(async (b) => {
        const keys = Array.from({ length: 2500 }, (_, i) => `gone/${i}`);
        await b.deleteMany(keys);
        assert.equal((await requests('POST', '/')).filter((r) => r.query.includes('delete')).length, 3);

        const denied = `<?xml version="1.0" encoding="UTF-8"?>
<DeleteResult><Error><Key>t${n}/a/1</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error></DeleteResult>`;
        await proxy.setRules([{ match: { method: 'POST', query: 'delete' }, action: { status: 200, body: denied } }]);
        const err = (await rejectsWith(b.deleteMany(['a/1', 'a/2']), 'IO')) as DeleteManyError;
        assert.equal(err.retryable, false);
        assert.deepEqual(err.failures, [{ key: 'a/1', code: 'AccessDenied', message: 'Access Denied' }]);
        assert.match(err.message, /1 of 2 keys were not deleted/);

        const busy = denied.replace('AccessDenied', 'InternalError');
        await proxy.setRules([{ match: { method: 'POST', query: 'delete' }, action: { status: 200, body: busy } }]);
        const retry = await rejectsWith(b.deleteMany(['a/1']), 'UNAVAILABLE');
        assert.equal(retry.retryable, true);
      }));

    it('the fault wrapper around the real backend: injected failures, lost answers and delays', async () => {
      const real = await open();
      try {
        const b = faultBackend(real);
        const stop503 = b.inject({ method: 'put', key: 'refs/db/main', fault: { status: 503 } });
        await rejectsWith(b.put('refs/db/main', Buffer.from('v1')), 'UNAVAILABLE');
        assert.equal(await real.stat('refs/db/main'), undefined, 'a fault before the call writes nothing');
        stop503();

        b.inject({ method: 'put', fault: { cut: true }, phase: 'after', times: 1 });
        await rejectsWith(b.put('refs/db/main', Buffer.from('v1'), { ifNoneMatch: true }), 'UNAVAILABLE');
        const landed = await real.get('refs/db/main');
        assert.deepEqual(landed.body, Buffer.from('v1'), "a cut after the call: the write landed, the answer didn't");

        b.inject({ method: 'put', fault: { status: 412 }, times: 2 });
        await rejectsWith(b.put('refs/db/x', Buffer.from('x'), { ifNoneMatch: true }), 'ALREADY_EXISTS');
        await rejectsWith(b.put('refs/db/main', Buffer.from('v2'), { ifMatch: landed.etag }), 'CAS_CONFLICT');

        b.inject({ method: 'get', fault: { timeout: true, afterMs: 50 }, times: 1 });
        const err = await rejectsWith(b.get('refs/db/main'), 'TIMEOUT');
        assert.equal(err.retryable, true);

        b.inject({ method: 'get', fault: { delayMs: 200 }, times: 1 });
        const started = Date.now();
        assert.deepEqual((await b.get('refs/db/main')).body, Buffer.from('v1'));
        assert.ok(Date.now() - started >= 190);
        assert.deepEqual(
          b.fired.map((f) => `${f.method}:${f.phase}`),
          ['put:before', 'put:after', 'put:before', 'put:before', 'get:before', 'get:before'],
        );
      } finally {
        await real.close();
      }
    });

    it('the counting wrapper counts every call per method, and only those', async () => {
      const real = await open();
      try {
        const b = countingBackend(real);
        await proxy.clearLog();
        const etag = await b.put('refs/db/main', Buffer.from('v1'), { ifNoneMatch: true });
        await b.get('refs/db/main');
        await b.put('refs/db/main', Buffer.from('v2'), { ifMatch: etag });
        await b.stat('refs/db/main');
        await b.copy('refs/db/main', 'refs/db/copy');
        await b.list('refs/');
        await b.deleteMany(['refs/db/copy']);
        assert.deepEqual(b.counts, {
          get: 1,
          getStream: 0,
          getToFile: 0,
          stat: 1,
          put: 2,
          delete: 0,
          deleteMany: 1,
          list: 1,
          copy: 1,
        });
        assert.equal(b.total(), 7);
        assert.deepEqual(b.calls.slice(0, 2), ['put refs/db/main', 'get refs/db/main']);
        // Each call is one request, except copy: HEAD of the source, then CopyObject.
        assert.equal((await proxy.log()).length, 8);
        b.reset();
        assert.equal(b.total(), 0);
        assert.deepEqual(b.calls, []);
      } finally {
        await real.close();
      }
    });

    it('every test object went where the test put it: the bucket holds only prefixed keys', async () => {
      const keys = await bucketKeys(bucket.name);
      assert.ok(
        keys.every((k) => /^t\d+\//.test(k)),
        keys.join(' '),
      );
      assert.ok(S3_ENDPOINT !== undefined);
    });
  });
}
