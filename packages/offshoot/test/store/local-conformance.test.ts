import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { hasCode } from '../../src/core/errors.js';
import type { ErrorCode } from '../../src/core/errors.js';
import { LocalBackend, openLocalBackend } from '../../src/store/local/local-backend.js';
import { runConformance } from './conformance.js';

const CRASH_WORKER = fileURLToPath(new URL('./put-crash-worker.ts', import.meta.url));

runConformance('local', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  const root = path.join(dir, 'store');
  return {
    backend: new LocalBackend(root),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    spawnWorkerEnv: { OFFSHOOT_RACE_BACKEND: `local:${root}` },
  };
});

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
const isCode =
  (...codes: ErrorCode[]) =>
  (err: unknown) =>
    codes.some((c) => hasCode(err, c));

/** Every file name under dir, recursively, relative to it (including bookkeeping files). */
function allFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(path.join(dir, p)).isFile()).sort();
}

describe('local backend specifics', () => {
  let tmp: string;
  let root: string;
  beforeEach(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    root = path.join(tmp, 'store');
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('a group create links nothing and leaves no temp file when one object cannot be placed', async () => {
    const b = await openLocalBackend(root);
    await b.put('data/file', bytes('an object where a directory would go'));
    const r = await b.createInTiers([
      [
        { key: 'data/new/base.json', body: bytes('new') },
        { key: 'data/file/base.json', body: bytes('collides') },
      ],
      [{ key: 'refs/db/x', body: bytes('names data/new') }],
    ]);
    assert.equal(r.failed?.key, 'data/file/base.json');
    assert.deepEqual(r.created, []);
    assert.deepEqual(allFiles(root), ['data/file'], 'no object, no ref and no .tmp- file were left');
  });

  it('a group create removes every temp file once its objects are in place', async () => {
    const b = await openLocalBackend(root);
    const objs = Array.from({ length: 70 }, (_, i) => ({ key: `data/l${i}/base.json`, body: bytes(String(i)) }));
    const refs = objs.map((_, i) => ({ key: `refs/db/b${i}`, body: bytes(`ref ${i}`) }));
    const r = await b.createInTiers([objs, refs]);
    assert.equal(r.failed, undefined);
    assert.equal(r.created.length, 140);
    const files = allFiles(root);
    assert.equal(files.length, 140);
    assert.ok(!files.some((f) => path.basename(f).startsWith('.tmp-')));
  });

  it('a handed-over file is linked into place, create-only; from another filesystem it is copied', async () => {
    const b = await openLocalBackend(root);
    const src = path.join(tmp, 'segment.ltx');
    const body = Buffer.alloc(70_000, 7);
    writeFileSync(src, body);
    assert.equal(await b.put('data/l/1/seg.ltx', { file: src, handOver: true }, { ifNoneMatch: true }), sha256(body));
    const placed = path.join(root, 'data/l/1/seg.ltx');
    assert.equal(statSync(placed).ino, statSync(src).ino, 'the object is the handed-over file, not a copy');
    assert.ok(existsSync(src), 'the caller keeps its name for the file');
    await assert.rejects(
      b.put('data/l/1/seg.ltx', { file: src, handOver: true }, { ifNoneMatch: true }),
      isCode('ALREADY_EXISTS'),
    );
    // /dev/shm is a tmpfs: a link from it into the store fails with EXDEV, and the put copies instead.
    assert.notEqual(statSync('/dev/shm').dev, statSync(tmp).dev);
    const shm = mkdtempSync('/dev/shm/offshoot-');
    try {
      const far = path.join(shm, 'segment.ltx');
      writeFileSync(far, body);
      await b.put('data/l/2/seg.ltx', { file: far, handOver: true }, { ifNoneMatch: true });
      assert.notEqual(statSync(path.join(root, 'data/l/2/seg.ltx')).ino, statSync(far).ino);
      assert.deepEqual((await b.get('data/l/2/seg.ltx')).body, body);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
    await assert.rejects(
      b.put('data/l/3/seg.ltx', { file: path.join(tmp, 'missing.ltx'), handOver: true }, { ifNoneMatch: true }),
      isCode('NOT_FOUND'),
    );
    assert.ok(!allFiles(root).some((f) => path.basename(f).startsWith('.tmp-')), 'no temp file is left');
  });

  it('the etag is the hex SHA-256 of the content, from put, get and stat alike', async () => {
    const b = await openLocalBackend(root);
    const body = bytes('{"schema":2}');
    assert.equal(await b.put('refs/db/main', body), sha256(body));
    assert.equal((await b.get('refs/db/main')).etag, sha256(body));
    assert.equal((await b.stat('refs/db/main'))?.etag, sha256(body));
    assert.equal((await b.list('refs/'))[0]?.etag, undefined, 'list does not hash');
    assert.equal(b.name, root);
    assert.deepEqual(b.capabilities, { conditionalDelete: true, cheapCopy: true });
  });

  it('rejects keys that could escape the root', async () => {
    const b = await openLocalBackend(root);
    for (const key of ['', '/abs', '../x', 'a/../../x', 'a//b', 'a/', 'a/./b', 'nul\0']) {
      await assert.rejects(b.put(key, bytes('x')), isCode('INVALID_ARGUMENT'), `put ${JSON.stringify(key)}`);
      await assert.rejects(b.get(key), isCode('INVALID_ARGUMENT'), `get ${JSON.stringify(key)}`);
    }
    await assert.rejects(b.list('../'), isCode('INVALID_ARGUMENT'));
    await assert.rejects(b.list('/etc'), isCode('INVALID_ARGUMENT'));
    await assert.rejects(b.deleteMany(['ok', '../bad']), isCode('INVALID_ARGUMENT'));
    assert.deepEqual(readdirSync(tmp), ['store']);
    assert.deepEqual(allFiles(root), []);
  });

  it('stores look-alikes of its bookkeeping under escaped names, and leaves every other name as it is', async () => {
    const b = await openLocalBackend(root);
    for (const key of ['refs/db/main', 'refs/db/main.lock', 'refs/.tmp-db/b', 'refs/db/%pct'])
      await b.put(key, bytes(key));
    assert.deepEqual(allFiles(root), ['refs/%.tmp-db%/b', 'refs/db/%%pct%', 'refs/db/%main.lock%', 'refs/db/main']);
    // main's CAS lock is main.lock beside it, and does not touch the object main.lock.
    writeFileSync(path.join(root, 'refs/db/main.lock'), 'other-host/3\n');
    await assert.rejects(
      new LocalBackend(root, { lockTimeoutMs: 100 }).put('refs/db/main', bytes('x'), { ifMatch: 'any' }),
      isCode('BUSY'),
    );
    assert.deepEqual((await b.get('refs/db/main.lock')).body, bytes('refs/db/main.lock'));
    // A stray file the backend never writes (a lone % name) is no object.
    writeFileSync(path.join(root, 'refs/db/%stray'), 'x');
    assert.deepEqual(
      (await b.list('refs/')).map((o) => o.key),
      ['refs/.tmp-db/b', 'refs/db/%pct', 'refs/db/main', 'refs/db/main.lock'],
    );
  });

  it('refuses a key that collides with a directory of keys, in either order', async () => {
    const b = await openLocalBackend(root);
    await b.put('a', bytes('file'));
    await assert.rejects(b.put('a/b', bytes('x')), isCode('INVALID_ARGUMENT'));
    await b.put('x/y', bytes('y'));
    await assert.rejects(b.put('x', bytes('x')), isCode('INVALID_ARGUMENT'));
    await assert.rejects(b.put('x', bytes('x'), { ifNoneMatch: true }), isCode('INVALID_ARGUMENT'));
    assert.deepEqual(allFiles(root), ['a', 'x/y']);
  });

  it('a conditional put whose check fails leaves no temp file, lock or directory, and a later put succeeds', async () => {
    const b = await openLocalBackend(root);
    const e1 = await b.put('refs/db/main', bytes('v1'));
    const e2 = await b.put('refs/db/main', bytes('v2'), { ifMatch: e1 });
    await assert.rejects(b.put('refs/db/main', bytes('stale'), { ifMatch: e1 }), isCode('CAS_CONFLICT'));
    await assert.rejects(b.put('refs/db/absent', bytes('x'), { ifMatch: e1 }), isCode('CAS_CONFLICT'));
    await assert.rejects(b.put('refs/none/absent', bytes('x'), { ifMatch: e1 }), isCode('CAS_CONFLICT'));
    assert.deepEqual(allFiles(root), ['refs/db/main'], 'no .tmp- file, no lock');
    assert.equal(existsSync(path.join(root, 'refs/none')), false, 'no directory made for a missing key');
    assert.deepEqual((await b.get('refs/db/main')).body, bytes('v2'));
    const e3 = await b.put('refs/db/main', bytes('v3'), { ifMatch: e2 });
    assert.equal((await b.get('refs/db/main')).etag, e3);
    assert.deepEqual(allFiles(root), ['refs/db/main']);
  });

  it('concurrent conditional puts on one key: exactly one wins, the rest conflict, no temp file is left', async () => {
    const b = await openLocalBackend(root);
    const e1 = await b.put('refs/db/main', bytes('v1'));
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => b.put('refs/db/main', bytes(`w${i}`), { ifMatch: e1 })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const r of results)
      if (r.status === 'rejected') assert.ok(hasCode(r.reason, 'CAS_CONFLICT'), String(r.reason));
    assert.equal((await b.get('refs/db/main')).etag, (won[0] as PromiseFulfilledResult<string>).value);
    assert.deepEqual(allFiles(root), ['refs/db/main']);
  });

  it('a lock file older than the stale threshold is broken and the write goes through', async () => {
    // A 20 s timeout: a writer that waited it out could never pass for one that broke the lock (load or not).
    const b = new LocalBackend(root, { lockTimeoutMs: 20_000 });
    const e1 = await b.put('refs/db/main', bytes('v1'));
    const lock = path.join(root, 'refs/db/main.lock');
    writeFileSync(lock, 'crashed-host/1\n');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const started = Date.now();
    await b.put('refs/db/main', bytes('v2'), { ifMatch: e1 });
    assert.ok(Date.now() - started < 10_000, 'a stale lock does not make the writer wait out the timeout');
    assert.deepEqual((await b.get('refs/db/main')).body, bytes('v2'));
    assert.equal(existsSync(lock), false);
    assert.deepEqual(allFiles(root), ['refs/db/main']);
  });

  it('a lock left behind is broken once it ages past a lowered stale threshold', async () => {
    const b = new LocalBackend(root, { lockStaleMs: 150, lockTimeoutMs: 3_000, lockPollMs: 5 });
    const e1 = await b.put('refs/db/main', bytes('v1'));
    writeFileSync(path.join(root, 'refs/db/main.lock'), 'gone/2\n');
    const started = Date.now();
    await b.delete('refs/db/main', { ifMatch: e1 });
    assert.ok(Date.now() - started >= 140, 'the lock was honoured while fresh');
    assert.equal(await b.stat('refs/db/main'), undefined);
    assert.deepEqual(allFiles(root), []);
  });

  it('a fresh lock held by another writer times out with BUSY and changes nothing', async () => {
    const b = new LocalBackend(root, { lockTimeoutMs: 150, lockPollMs: 2 });
    const e1 = await b.put('refs/db/main', bytes('v1'));
    const lock = path.join(root, 'refs/db/main.lock');
    writeFileSync(lock, 'other-host/3\n');
    const started = Date.now();
    let busy: unknown;
    await assert.rejects(b.put('refs/db/main', bytes('v2'), { ifMatch: e1 }), (err: unknown) => {
      busy = err;
      return hasCode(err, 'BUSY');
    });
    assert.ok(Date.now() - started >= 150);
    assert.equal((busy as { retryable: boolean }).retryable, true);
    assert.match(String((busy as { hint?: string }).hint), /main\.lock/);
    await assert.rejects(b.put('refs/db/main', bytes('v3')), isCode('BUSY'));
    await assert.rejects(b.delete('refs/db/main'), isCode('BUSY'));
    assert.deepEqual((await b.get('refs/db/main')).body, bytes('v1'));
    assert.equal(existsSync(lock), true, 'a fresh lock is never broken');
    await b.put('refs/db/other', bytes('create-only needs no lock'), { ifNoneMatch: true });
    assert.deepEqual(allFiles(root), ['refs/db/main', 'refs/db/main.lock', 'refs/db/other']);
  });

  it('a writer waiting on a lock proceeds as soon as the holder releases it', async () => {
    const b = new LocalBackend(root, { lockTimeoutMs: 5_000 });
    const e1 = await b.put('refs/db/main', bytes('v1'));
    const lock = path.join(root, 'refs/db/main.lock');
    writeFileSync(lock, 'holder/4\n');
    const pending = b.put('refs/db/main', bytes('v2'), { ifMatch: e1 });
    await sleep(100);
    assert.deepEqual((await b.get('refs/db/main')).body, bytes('v1'), 'still blocked behind the lock');
    rmSync(lock);
    await pending;
    assert.deepEqual((await b.get('refs/db/main')).body, bytes('v2'));
  });

  it('lock and temp files never appear in listings, even mid-write', async () => {
    const b = await openLocalBackend(root);
    await b.put('refs/db/main', bytes('0'));
    mkdirSync(path.join(root, 'data/l'), { recursive: true });
    writeFileSync(path.join(root, 'data/l/.tmp-deadbeef'), 'half a snapshot');
    writeFileSync(path.join(root, 'data/x.lock'), 'h/5\n');
    writeFileSync(path.join(root, '.tmp-top'), '');
    const known = new Set(['refs/db/main', 'refs/db/side']);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 200; i++) {
        const { etag } = await b.get('refs/db/main');
        await b.put('refs/db/main', bytes(String(i)), { ifMatch: etag });
        await b.put('refs/db/side', bytes(String(i)));
      }
      writing = false;
    })();
    let lists = 0;
    while (writing) {
      for (const o of await b.list('')) assert.ok(known.has(o.key), `unexpected key ${o.key} in listing`);
      lists++;
    }
    await writer;
    assert.ok(lists > 0);
    assert.deepEqual(
      (await b.list('')).map((o) => o.key),
      ['refs/db/main', 'refs/db/side'],
    );
  });

  it('deleting the last key of a directory prunes empty parents but never the root', async () => {
    const b = await openLocalBackend(root);
    await b.put('data/l/1/snapshot.ltx', bytes('x'));
    await b.put('data/keep', bytes('k'));
    await b.delete('data/l/1/snapshot.ltx');
    assert.equal(existsSync(path.join(root, 'data/l')), false);
    assert.equal(existsSync(path.join(root, 'data')), true);
    await b.deleteMany(['data/keep']);
    assert.equal(existsSync(path.join(root, 'data')), false);
    assert.deepEqual(readdirSync(root), []);
  });

  it('a writer killed mid-put leaves only a hidden temp file that breaks nothing', async () => {
    const b = await openLocalBackend(root);
    const e1 = await b.put('data/l/1/snapshot.ltx', bytes('complete v1'));
    const fifo = path.join(tmp, 'body.fifo');
    execFileSync('mkfifo', [fifo]);
    const child = spawn(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), CRASH_WORKER, root, 'data/l/1/snapshot.ltx', fifo],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('close', (_code, signal) => resolve(signal)),
    );

    // Non-blocking open fails with ENXIO until the worker opens the FIFO for reading.
    const deadline = Date.now() + 20_000;
    let writer;
    while (writer === undefined) {
      assert.ok(Date.now() < deadline && child.exitCode === null, `worker never opened the body: ${stderr}`);
      writer = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
      if (writer === undefined) await sleep(10);
    }
    const half = Buffer.alloc(32 * 1024, 7);
    await writer.write(half);
    const dir = path.join(root, 'data/l/1');
    const tmpName = () =>
      readdirSync(dir).find((n) => n.startsWith('.tmp-') && statSync(path.join(dir, n)).size >= half.length);
    while (tmpName() === undefined) {
      assert.ok(Date.now() < deadline, 'the worker never wrote its temp file');
      await sleep(5);
    }
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    await writer.close();

    assert.ok(tmpName() !== undefined, 'the killed writer left its temp file behind');
    assert.deepEqual(
      (await b.list('')).map((o) => o.key),
      ['data/l/1/snapshot.ltx'],
    );
    assert.deepEqual((await b.get('data/l/1/snapshot.ltx')).body, bytes('complete v1'));
    const e2 = await b.put('data/l/1/snapshot.ltx', bytes('complete v2'), { ifMatch: e1 });
    await b.put('data/l/1/segment.ltx', bytes('s'), { ifNoneMatch: true });
    assert.equal((await b.get('data/l/1/snapshot.ltx')).etag, e2);
    assert.deepEqual(
      (await b.list('data/')).map((o) => o.key),
      ['data/l/1/segment.ltx', 'data/l/1/snapshot.ltx'],
    );
  });
});
