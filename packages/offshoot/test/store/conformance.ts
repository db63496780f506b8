// The contract every Backend meets, as node:test cases. A backend's test file calls runConformance with a
// factory that yields a fresh, empty store per case.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { hasCode } from '../../src/core/errors.js';
import type { ErrorCode, OffshootError } from '../../src/core/errors.js';
import type { Backend } from '../../src/store/backend.js';
import { createInTiers } from '../../src/store/group-create.js';

const MiB = 1024 * 1024;
const WORKER = fileURLToPath(new URL('./cas-race-worker.ts', import.meta.url));

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function rejectsWith(p: Promise<unknown>, ...codes: ErrorCode[]): Promise<OffshootError> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => {
    caught = err;
    return codes.some((c) => hasCode(err, c));
  });
  return caught as OffshootError;
}

async function hashOfFile(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function hashOfStream(stream: Readable): Promise<{ hash: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { hash: h.digest('hex'), size };
}

/** Writes size pseudo-random bytes to file without holding them in memory; returns their SHA-256. */
async function writeBigFile(file: string, size: number): Promise<string> {
  const block = randomBytes(MiB);
  const h = createHash('sha256');
  async function* chunks() {
    for (let off = 0; off < size; off += MiB) {
      const chunk = Buffer.from(block.subarray(0, Math.min(MiB, size - off)));
      chunk.writeUInt32LE(off / MiB, 0);
      h.update(chunk);
      yield chunk;
    }
  }
  await pipeline(Readable.from(chunks()), createWriteStream(file));
  return h.digest('hex');
}

// A full collection on demand: the sampler below measures what a transfer holds, not the chunks it already let go of
// that the collector has not reclaimed yet (how much of that waits depends on the Node major's heuristics).
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/**
 * Runs fn while sampling RSS after a full collection every 10 ms; returns fn's result, the peak growth over the
 * starting RSS, and the time taken.
 */
async function withRssPeak<T>(fn: () => Promise<T>): Promise<{ result: T; growth: number; ms: number }> {
  const started = performance.now();
  collect();
  const start = process.memoryUsage.rss();
  let peak = start;
  const timer = setInterval(() => {
    collect();
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  try {
    const result = await fn();
    collect();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growth: peak - start, ms: Math.round(performance.now() - started) };
  } finally {
    clearInterval(timer);
  }
}

interface RaceWorker {
  ready: Promise<void>;
  done: Promise<string>;
  go: () => void;
}

function spawnRaceWorker(env: NodeJS.ProcessEnv): RaceWorker {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), WORKER], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<string>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      markReady();
      if (code === 0) resolve(stdout.trim().split('\n').at(-1) ?? '');
      else reject(new Error(`race worker exited with ${code}: ${stderr.trim()}`));
    });
  });
  return { ready, done, go: () => child.stdin.end('go\n') };
}

/** Registers the backend contract tests for one backend under describe(`backend conformance: ${name}`). */
export function runConformance(
  name: string,
  make: () => Promise<{ backend: Backend; cleanup: () => Promise<void>; spawnWorkerEnv?: Record<string, string> }>,
  opts?: { bigObjectBytes?: number; raceProcesses?: number; raceRounds?: number },
): void {
  const bigObjectBytes = opts?.bigObjectBytes ?? 256 * MiB;
  const raceProcesses = opts?.raceProcesses ?? 8;
  const raceRounds = opts?.raceRounds ?? 100;

  type Fixture = Awaited<ReturnType<typeof make>>;
  async function withStore(fn: (b: Backend, f: Fixture) => Promise<void>): Promise<void> {
    const f = await make();
    try {
      await fn(f.backend, f);
    } finally {
      await f.cleanup();
      await f.backend.close();
    }
  }

  async function withScratch(fn: (dir: string) => Promise<void>): Promise<void> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  describe(`backend conformance: ${name}`, () => {
    it('put then get returns the bytes and the etag put returned', () =>
      withStore(async (b) => {
        const etag = await b.put('refs/db/main', bytes('{"head":1}'));
        assert.equal(typeof etag, 'string');
        assert.ok(etag.length > 0);
        const got = await b.get('refs/db/main');
        assert.deepEqual(got.body, bytes('{"head":1}'));
        assert.equal(got.etag, etag);
        const empty = await b.put('empty', new Uint8Array(0));
        assert.equal((await b.get('empty')).body.length, 0);
        assert.equal((await b.get('empty')).etag, empty);
      }));

    it('an unconditional put overwrites and the etag follows the content', () =>
      withStore(async (b) => {
        const e1 = await b.put('k', bytes('one'));
        const e2 = await b.put('k', bytes('two'));
        assert.notEqual(e1, e2);
        const got = await b.get('k');
        assert.deepEqual(got.body, bytes('two'));
        assert.equal(got.etag, e2);
      }));

    it('reading a missing key fails with NOT_FOUND everywhere, and stat says undefined', () =>
      withStore(async (b) =>
        withScratch(async (dir) => {
          await b.put('present', bytes('x'));
          await rejectsWith(b.get('absent'), 'NOT_FOUND');
          await rejectsWith(b.getStream('absent'), 'NOT_FOUND');
          const dest = path.join(dir, 'out.bin');
          await rejectsWith(b.getToFile('absent', dest), 'NOT_FOUND');
          assert.equal(existsSync(dest), false);
          assert.equal(await b.stat('absent'), undefined);
        }),
      ));

    it('a key that is only a prefix of other keys is not an object', () =>
      withStore(async (b) => {
        await b.put('refs/db/main', bytes('x'));
        assert.equal(await b.stat('refs/db'), undefined);
        await rejectsWith(b.get('refs/db'), 'NOT_FOUND');
        await b.delete('refs/db');
        assert.deepEqual((await b.get('refs/db/main')).body, bytes('x'));
      }));

    it('keys that end in .lock or start with .tmp- (valid branch and database names) are ordinary keys', () =>
      withStore(async (b) => {
        const keys = ['refs/db/x', 'refs/db/x.lock', 'refs/db/.tmp-x', 'refs/.tmp-db/main', 'refs/db.lock/main'];
        const etags = new Map<string, string>();
        for (const k of keys) etags.set(k, await b.put(k, bytes(`v1 ${k}`), { ifNoneMatch: true }));
        // A compare-and-swap of each key beside its look-alike: neither is taken for the other's lock or temp file.
        for (const k of keys) {
          const next = await b.put(k, bytes(`v2 ${k}`), { ifMatch: etags.get(k) ?? '' });
          await rejectsWith(b.put(k, bytes('stale'), { ifMatch: etags.get(k) ?? '' }), 'CAS_CONFLICT');
          etags.set(k, next);
        }
        for (const k of keys) assert.deepEqual((await b.get(k)).body, bytes(`v2 ${k}`), k);
        assert.deepEqual(
          (await b.list('refs/')).map((o) => o.key),
          [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))),
        );
        assert.deepEqual(
          (await b.list('refs/db/x')).map((o) => o.key),
          ['refs/db/x', 'refs/db/x.lock'],
        );
        assert.deepEqual(
          (await b.list('refs/.tmp-db/')).map((o) => o.key),
          ['refs/.tmp-db/main'],
        );
        await b.copy('refs/db/x.lock', 'refs/db/.tmp-copy', { ifNoneMatch: true });
        assert.deepEqual((await b.get('refs/db/.tmp-copy')).body, bytes('v2 refs/db/x.lock'));
        await b.delete('refs/db/x.lock', { ifMatch: etags.get('refs/db/x.lock') ?? '' });
        await b.deleteMany(['refs/db/.tmp-x', 'refs/db/.tmp-copy', 'refs/.tmp-db/main', 'refs/db.lock/main']);
        assert.deepEqual(
          (await b.list('refs/')).map((o) => o.key),
          ['refs/db/x'],
        );
      }));

    it('a create-only put refuses an existing key and leaves it unchanged', () =>
      withStore(async (b) => {
        const e1 = await b.put('data/l/1/snapshot.ltx', bytes('first'), { ifNoneMatch: true });
        await rejectsWith(b.put('data/l/1/snapshot.ltx', bytes('second'), { ifNoneMatch: true }), 'ALREADY_EXISTS');
        const got = await b.get('data/l/1/snapshot.ltx');
        assert.deepEqual(got.body, bytes('first'));
        assert.equal(got.etag, e1);
      }));

    it('an if-match put with a stale etag loses with CAS_CONFLICT and changes nothing', () =>
      withStore(async (b) => {
        const e1 = await b.put('refs/db/main', bytes('v1'));
        const e2 = await b.put('refs/db/main', bytes('v2'), { ifMatch: e1 });
        assert.notEqual(e2, e1);
        const err = await rejectsWith(b.put('refs/db/main', bytes('v3'), { ifMatch: e1 }), 'CAS_CONFLICT');
        assert.equal(err.retryable, false);
        assert.ok(typeof err.hint === 'string' && err.hint.length > 0, 'CAS_CONFLICT carries a hint');
        const got = await b.get('refs/db/main');
        assert.deepEqual(got.body, bytes('v2'));
        assert.equal(got.etag, e2);
      }));

    it('an if-match put on a missing key fails and writes nothing', () =>
      withStore(async (b) => {
        const old = await b.put('refs/db/gone', bytes('was here'));
        await b.delete('refs/db/gone');
        await rejectsWith(b.put('refs/db/gone', bytes('again'), { ifMatch: old }), 'CAS_CONFLICT', 'NOT_FOUND');
        assert.equal(await b.stat('refs/db/gone'), undefined);
        await rejectsWith(b.put('refs/db/never', bytes('x'), { ifMatch: old }), 'CAS_CONFLICT', 'NOT_FOUND');
        assert.equal(await b.stat('refs/db/never'), undefined);
        assert.deepEqual(await b.list('refs/'), []);
      }));

    it('a put from a file stores the file content', () =>
      withStore(async (b) =>
        withScratch(async (dir) => {
          const src = path.join(dir, 'src.bin');
          const content = randomBytes(300_000);
          await writeFile(src, content);
          const etag = await b.put('data/l/1/from-file.ltx', { file: src });
          const got = await b.get('data/l/1/from-file.ltx');
          assert.ok(got.body.equals(content));
          assert.equal(got.etag, etag);
          await rejectsWith(b.put('data/l/1/other.ltx', { file: path.join(dir, 'missing.bin') }), 'NOT_FOUND', 'IO');
          assert.equal(await b.stat('data/l/1/other.ltx'), undefined);
        }),
      ));

    it('stat reports the size and the same etag as put and get', () =>
      withStore(async (b) => {
        const etag = await b.put('a/b/c', bytes('12345'));
        const info = await b.stat('a/b/c');
        assert.deepEqual(info, { key: 'a/b/c', size: 5, etag });
      }));

    it('getStream streams the object', () =>
      withStore(async (b) => {
        const content = randomBytes(200_000);
        await b.put('s', content);
        const { hash, size } = await hashOfStream(await b.getStream('s'));
        assert.equal(size, content.length);
        assert.equal(hash, createHash('sha256').update(content).digest('hex'));
      }));

    it('getToFile writes the object to a file, replacing what was there, and returns its size', () =>
      withStore(async (b) =>
        withScratch(async (dir) => {
          const content = randomBytes(100_000);
          await b.put('obj', content);
          const dest = path.join(dir, 'copy.bin');
          await writeFile(dest, 'old contents that are longer than nothing');
          assert.equal(await b.getToFile('obj', dest), content.length);
          assert.ok((await readFile(dest)).equals(content));
        }),
      ));

    it('objects of every size around the read sizes come back whole through get, getStream, getToFile and stat', () =>
      withStore(async (b) =>
        withScratch(async (dir) => {
          // Reads start small and grow: each size sits at, just under or just over one of those steps.
          for (const size of [0, 1, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 128 * 1024, 128 * 1024 + 1, MiB + 1]) {
            const content = randomBytes(size);
            const src = path.join(dir, `src-${size}.bin`);
            await writeFile(src, content);
            const key = `data/sizes/${size}.ltx`;
            const etag = await b.put(key, { file: src });
            const got = await b.get(key);
            assert.ok(got.body.equals(content), `get of ${size} bytes`);
            assert.equal(got.etag, etag);
            assert.deepEqual(await b.stat(key), { key, size, etag }, `stat of ${size} bytes`);
            const streamed = await hashOfStream(await b.getStream(key));
            assert.deepEqual(streamed, { hash: createHash('sha256').update(content).digest('hex'), size });
            const dest = path.join(dir, `back-${size}.bin`);
            assert.equal(await b.getToFile(key, dest), size);
            assert.ok((await readFile(dest)).equals(content), `getToFile of ${size} bytes`);
            await b.put(key, bytes('next'), { ifMatch: etag });
          }
        }),
      ));

    it('list returns keys sorted in byte order with sizes, filtered by any prefix', () =>
      withStore(async (b) => {
        const keys = [
          'refs/db2/main',
          'refs/db/main',
          'refs/dbx',
          'refs/db/feature-1',
          'refs/db/Feature',
          'refs/db/_x',
          'offshoot.json',
          'data/0123/1/snapshot-0000000000000001.ltx',
          'gc/tombstones',
        ];
        for (const [i, k] of keys.entries()) await b.put(k, bytes('x'.repeat(i + 1)));
        const all = await b.list('');
        assert.deepEqual(
          all.map((o) => o.key),
          [...keys].sort(byteOrder),
        );
        for (const o of all) assert.equal(o.size, keys.indexOf(o.key) + 1);
        assert.deepEqual(
          (await b.list('refs/db/')).map((o) => o.key),
          ['refs/db/Feature', 'refs/db/_x', 'refs/db/feature-1', 'refs/db/main'],
        );
        assert.deepEqual(
          (await b.list('refs/db')).map((o) => o.key),
          ['refs/db/Feature', 'refs/db/_x', 'refs/db/feature-1', 'refs/db/main', 'refs/db2/main', 'refs/dbx'],
        );
        assert.deepEqual(
          (await b.list('refs/db/f')).map((o) => o.key),
          ['refs/db/feature-1'],
        );
        assert.deepEqual(
          (await b.list('offshoot.json')).map((o) => o.key),
          ['offshoot.json'],
        );
        assert.deepEqual(await b.list('nothing/'), []);
        assert.deepEqual(await b.list('refs/db/main/'), []);
        await b.delete('refs/db/main');
        await b.delete('refs/dbx');
        assert.deepEqual(
          (await b.list('refs/')).map((o) => o.key),
          ['refs/db/Feature', 'refs/db/_x', 'refs/db/feature-1', 'refs/db2/main'],
        );
      }));

    it('listKeys gives exactly the keys list gives, in the same order, for any prefix', () =>
      withStore(async (b) => {
        const keys = [
          'refs/db2/main',
          'refs/db/main',
          'refs/dbx',
          'refs/db/x.lock',
          'refs/db/.tmp-x',
          'refs/.tmp-db/main',
          'offshoot.json',
          'data/0123/1/snapshot-0000000000000001.ltx',
          'data/0123/base.json',
        ];
        for (const k of keys) await b.put(k, bytes(k));
        for (const prefix of ['', 'refs/', 'refs/db', 'refs/db/', 'refs/db/x', 'data/', 'nothing/', 'refs/db/main/']) {
          assert.deepEqual(
            await b.listKeys(prefix),
            (await b.list(prefix)).map((o) => o.key),
            `prefix ${JSON.stringify(prefix)}`,
          );
        }
        assert.deepEqual(await b.listKeys('refs/db/'), ['refs/db/.tmp-x', 'refs/db/main', 'refs/db/x.lock']);
      }));

    it('getMany answers in the order asked, undefined for a missing key or a prefix, with the etags get gives', () =>
      withStore(async (b) => {
        const keys = Array.from({ length: 150 }, (_, i) => `refs/db/b-${i}`);
        const etags = new Map<string, string>();
        for (const k of keys) etags.set(k, await b.put(k, bytes(`body of ${k}`)));
        const asked = ['refs/db/b-149', 'refs/db/absent', 'refs/db', ...keys.slice(0, 140)];
        const got = await b.getMany(asked);
        assert.equal(got.length, asked.length);
        assert.equal(got[1], undefined);
        assert.equal(got[2], undefined);
        for (const [i, k] of asked.entries()) {
          if (i === 1 || i === 2) continue;
          assert.deepEqual(got[i]?.body, bytes(`body of ${k}`), k);
          assert.equal(got[i]?.etag, etags.get(k), k);
        }
        // The etag a batched read gives is one a compare-and-swap accepts.
        const first = got[0];
        assert.ok(first !== undefined);
        await b.put('refs/db/b-149', bytes('next'), { ifMatch: first.etag });
        assert.deepEqual(await b.getMany([]), []);
      }));

    it('getManyText, where a backend has it, reads what getMany reads, as text, in the order asked', () =>
      withStore(async (b) => {
        if (b.getManyText === undefined) return;
        const keys = Array.from({ length: 150 }, (_, i) => `refs/db/t-${i}`);
        for (const k of keys) await b.put(k, bytes(`{"key":"${k}","é":"ü"}`));
        const asked = ['refs/db/t-149', 'refs/db/absent', 'refs/db', ...keys.slice(0, 140)];
        const got = await b.getManyText(asked);
        const many = await b.getMany(asked);
        assert.equal(got.length, asked.length);
        assert.equal(got[1], undefined);
        assert.equal(got[2], undefined);
        for (const [i, k] of asked.entries()) assert.equal(got[i], many[i]?.body.toString('utf8'), k);
        assert.deepEqual(await b.getManyText([]), []);
      }));

    it('list returns more than 1000 keys complete and in order; deleteMany removes them all', () =>
      withStore(async (b) => {
        const keys = Array.from({ length: 1050 }, (_, i) => `many/k-${String(i).padStart(4, '0')}`);
        const shuffled = [...keys].sort(() => Math.random() - 0.5);
        for (let i = 0; i < shuffled.length; i += 50) {
          await Promise.all(shuffled.slice(i, i + 50).map((k) => b.put(k, bytes(k))));
        }
        await b.put('other', bytes('x'));
        const listed = await b.list('many/');
        assert.equal(listed.length, keys.length);
        assert.deepEqual(
          listed.map((o) => o.key),
          keys,
        );
        assert.deepEqual(
          (await b.list('many/k-10')).map((o) => o.key),
          keys.slice(1000),
        );
        await b.deleteMany(keys);
        assert.deepEqual(await b.list('many/'), []);
        assert.deepEqual(
          (await b.list('')).map((o) => o.key),
          ['other'],
        );
      }));

    it('delete is idempotent and removes the key from get, stat and list', () =>
      withStore(async (b) => {
        await b.delete('never/existed');
        await b.put('data/l/1/x.ltx', bytes('x'));
        await b.put('data/l/keep.json', bytes('k'));
        await b.delete('data/l/1/x.ltx');
        await b.delete('data/l/1/x.ltx');
        assert.equal(await b.stat('data/l/1/x.ltx'), undefined);
        await rejectsWith(b.get('data/l/1/x.ltx'), 'NOT_FOUND');
        assert.deepEqual(
          (await b.list('data/')).map((o) => o.key),
          ['data/l/keep.json'],
        );
        await b.put('data/l/1/x.ltx', bytes('back'), { ifNoneMatch: true });
        assert.deepEqual((await b.get('data/l/1/x.ltx')).body, bytes('back'));
      }));

    it('a conditional delete removes only the named version', async (t) => {
      await withStore(async (b) => {
        if (!b.capabilities.conditionalDelete) {
          t.skip(`${name} does not enforce conditional deletes`);
          return;
        }
        const e1 = await b.put('refs/db/x', bytes('v1'));
        const e2 = await b.put('refs/db/x', bytes('v2'), { ifMatch: e1 });
        const err = await rejectsWith(b.delete('refs/db/x', { ifMatch: e1 }), 'CAS_CONFLICT');
        assert.equal(err.retryable, false);
        assert.deepEqual((await b.get('refs/db/x')).body, bytes('v2'));
        await b.delete('refs/db/x', { ifMatch: e2 });
        assert.equal(await b.stat('refs/db/x'), undefined);
      });
    });

    it('deleteMany deletes present keys and ignores missing ones', () =>
      withStore(async (b) => {
        for (const k of ['a/1', 'a/2', 'a/3', 'b/1']) await b.put(k, bytes(k));
        await b.deleteMany(['a/1', 'missing/1', 'a/3', 'missing/2']);
        await b.deleteMany([]);
        assert.deepEqual(
          (await b.list('')).map((o) => o.key),
          ['a/2', 'b/1'],
        );
      }));

    it('a group create writes every tier: each object create-only, with its bytes, in many directories', () =>
      withStore(async (b) => {
        const tier = (top: string, n: number) =>
          Array.from({ length: n }, (_, i) => ({ key: `${top}/l${i}/base.json`, body: bytes(`${top} ${i}`) }));
        const bases = tier('data', 40);
        const refs = Array.from({ length: 40 }, (_, i) => ({ key: `refs/db/f-${i}`, body: bytes(`ref ${i}`) }));
        const r = await createInTiers(b, [bases, refs]);
        assert.equal(r.failed, undefined);
        assert.deepEqual([...r.created].sort(), [...bases, ...refs].map((o) => o.key).sort());
        for (const o of [bases[0], bases[39], refs[0], refs[39]]) {
          assert.deepEqual((await b.get(o?.key ?? '')).body, o?.body);
        }
        assert.deepEqual(
          (await b.list('')).map((o) => o.key),
          [...bases, ...refs].map((o) => o.key).sort(),
          'nothing but the objects (no temp files)',
        );
      }));

    it('a group create whose tier fails writes no later tier and reports what it created', () =>
      withStore(async (b) => {
        await b.put('data/taken/base.json', bytes('already here'));
        const bases = ['data/a/base.json', 'data/taken/base.json', 'data/c/base.json'].map((key) => ({
          key,
          body: bytes(key),
        }));
        const refs = ['refs/db/a', 'refs/db/c'].map((key) => ({ key, body: bytes(key) }));
        const r = await createInTiers(b, [bases, refs]);
        assert.equal(r.failed?.key, 'data/taken/base.json');
        assert.ok(hasCode(r.failed?.error, 'ALREADY_EXISTS'), String(r.failed?.error));
        assert.ok(
          r.created.every((k) => k.startsWith('data/')),
          'no object of the later tier was created',
        );
        assert.deepEqual(await b.list('refs/'), [], 'no ref names a base pointer of the failed tier');
        assert.deepEqual((await b.get('data/taken/base.json')).body, bytes('already here'));
        const present = (await b.list('data/')).map((o) => o.key);
        assert.deepEqual(
          present.filter((k) => !r.created.includes(k)),
          ['data/taken/base.json'],
        );
      }));

    it('copy duplicates an object; create-only copy refuses an existing destination', () =>
      withStore(async (b) => {
        const content = randomBytes(50_000);
        const srcEtag = await b.put('data/a/1/snapshot.ltx', content);
        await b.copy('data/a/1/snapshot.ltx', 'data/b/1/snapshot.ltx', { ifNoneMatch: true });
        assert.ok((await b.get('data/b/1/snapshot.ltx')).body.equals(content));
        assert.equal((await b.get('data/a/1/snapshot.ltx')).etag, srcEtag);

        await b.put('data/c/1/snapshot.ltx', bytes('occupied'));
        await rejectsWith(
          b.copy('data/a/1/snapshot.ltx', 'data/c/1/snapshot.ltx', { ifNoneMatch: true }),
          'ALREADY_EXISTS',
        );
        assert.deepEqual((await b.get('data/c/1/snapshot.ltx')).body, bytes('occupied'));

        await b.copy('data/a/1/snapshot.ltx', 'data/c/1/snapshot.ltx');
        assert.ok((await b.get('data/c/1/snapshot.ltx')).body.equals(content));

        await rejectsWith(b.copy('data/none', 'data/d/1/snapshot.ltx'), 'NOT_FOUND');
        assert.equal(await b.stat('data/d/1/snapshot.ltx'), undefined);
      }));

    it(`a ${Math.round(bigObjectBytes / MiB)} MiB object streams from a file and back with bounded memory`, (t) =>
      withStore(async (b) =>
        withScratch(async (dir) => {
          const src = path.join(dir, 'big.src');
          const want = await writeBigFile(src, bigObjectBytes);
          // Loading the object whole anywhere would grow RSS by its full size; streaming stays far below half.
          const budget = Math.max(64 * MiB, bigObjectBytes / 2);

          const put = await withRssPeak(() => b.put('data/big/1/snapshot.ltx', { file: src }, { ifNoneMatch: true }));
          assert.ok(put.growth < budget, `put grew RSS by ${(put.growth / MiB).toFixed(1)} MiB`);
          assert.equal((await b.stat('data/big/1/snapshot.ltx'))?.size, bigObjectBytes);

          const dest = path.join(dir, 'big.out');
          const back = await withRssPeak(() => b.getToFile('data/big/1/snapshot.ltx', dest));
          assert.ok(back.growth < budget, `getToFile grew RSS by ${(back.growth / MiB).toFixed(1)} MiB`);
          assert.equal(back.result, bigObjectBytes);
          assert.equal(await hashOfFile(dest), want);

          const streamed = await withRssPeak(async () => hashOfStream(await b.getStream('data/big/1/snapshot.ltx')));
          assert.ok(streamed.growth < budget, `getStream grew RSS by ${(streamed.growth / MiB).toFixed(1)} MiB`);
          assert.deepEqual(streamed.result, { hash: want, size: bigObjectBytes });
          const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
          t.diagnostic(
            `RSS growth: put ${mib(put.growth)}, getToFile ${mib(back.growth)}, getStream ${mib(streamed.growth)}`,
          );
          t.diagnostic(`time: put ${put.ms} ms, getToFile ${back.ms} ms, getStream ${streamed.ms} ms`);
        }),
      ));

    it(`${raceProcesses} processes x ${raceRounds} CAS increments: exactly one winner per value`, async (t) => {
      await withStore(async (b, f) =>
        withScratch(async (dir) => {
          if (f.spawnWorkerEnv === undefined) {
            t.skip('the factory gives no spawnWorkerEnv, so workers cannot reach this store');
            return;
          }
          const key = 'race/counter';
          await b.put(key, bytes(JSON.stringify({ n: 0, by: 'init' })), { ifNoneMatch: true });
          const outs = Array.from({ length: raceProcesses }, (_, i) => path.join(dir, `worker-${i}.txt`));
          const workers = outs.map((out, i) =>
            spawnRaceWorker({
              ...process.env,
              ...f.spawnWorkerEnv,
              OFFSHOOT_RACE_KEY: key,
              OFFSHOOT_RACE_ROUNDS: String(raceRounds),
              OFFSHOOT_RACE_OUT: out,
              OFFSHOOT_RACE_ID: `w${i}`,
            }),
          );
          // Start everyone together so the rounds really contend instead of running one process at a time.
          await Promise.all(workers.map((w) => w.ready));
          const started = Date.now();
          for (const w of workers) w.go();
          const summaries = await Promise.all(workers.map((w) => w.done));
          t.diagnostic(`race took ${Date.now() - started} ms: ${summaries.join(' ')}`);

          const total = raceProcesses * raceRounds;
          const values: number[] = [];
          for (const out of outs) {
            const mine = (await readFile(out, 'utf8')).split('\n').filter(Boolean).map(Number);
            assert.equal(mine.length, raceRounds, `${out} records one win per round`);
            values.push(...mine);
          }
          values.sort((x, y) => x - y);
          assert.deepEqual(
            values,
            Array.from({ length: total }, (_, i) => i + 1),
          );
          assert.equal((JSON.parse((await b.get(key)).body.toString('utf8')) as { n: number }).n, total);
        }),
      );
    });
  });
}
