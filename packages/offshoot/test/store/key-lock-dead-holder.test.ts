import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { hasCode } from '../../src/core/errors.js';
import { processSpace } from '../../src/platform/process-space.js';
import { LocalBackend } from '../../src/store/local/local-backend.js';

const HOLD_WORKER = fileURLToPath(new URL('./lock-hold-worker.ts', import.meta.url));
const KEY = 'refs/db/main';
const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
/**
 * Timings under which "at once" can be told from "waited out" on a loaded machine: a writer that waited a lock out
 * would take the whole 20 s timeout (the stale time is 30 s), one that broke it takes a small fraction of it.
 */
const PATIENT = { lockTimeoutMs: 20_000 };
const AT_ONCE_MS = PATIENT.lockTimeoutMs / 2;

/** A pid that just existed on this host and has exited (and been reaped). */
function deadPid(): number {
  const pid = spawnSync('true').pid;
  assert.ok(pid !== undefined && pid > 0);
  return pid;
}

/** What a lock taken by pid of this host and pid namespace holds. */
const holderOf = (pid: number | undefined): string => `${String(pid)}@${processSpace()}\n`;

/** Resolves once the child has exited and been reaped. */
function exitOf(child: ChildProcess): Promise<NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
}

/** Every regular file under dir, relative to it. */
function allFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(path.join(dir, p)).isFile()).sort();
}

describe('key locks left by a dead or stale holder', () => {
  let tmp: string;
  let root: string;
  let lock: string;
  beforeEach(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    root = path.join(tmp, 'store');
    lock = path.join(root, `${KEY}.lock`);
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('a lock naming a dead process of this host is broken at once, long before it is stale', async () => {
    const b = new LocalBackend(root, PATIENT);
    const e1 = await b.put(KEY, bytes('v1'));
    writeFileSync(lock, holderOf(deadPid()));
    const started = Date.now();
    await b.put(KEY, bytes('v2'), { ifMatch: e1 });
    assert.ok(Date.now() - started < AT_ONCE_MS, `took ${Date.now() - started} ms against a 30 s stale time`);
    assert.deepEqual((await b.get(KEY)).body, bytes('v2'));
    assert.deepEqual(allFiles(root), [KEY], 'neither the lock nor its breaker lock is left');
  });

  it('a lock naming a live process of this host is waited on, and broken once that process dies', async () => {
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      assert.ok(holder.pid !== undefined);
      const b = new LocalBackend(root, { lockTimeoutMs: 300 });
      const e1 = await b.put(KEY, bytes('v1'));
      const text = holderOf(holder.pid);
      writeFileSync(lock, text);
      const started = Date.now();
      let busy: unknown;
      await assert.rejects(b.put(KEY, bytes('v2'), { ifMatch: e1 }), (err: unknown) => {
        busy = err;
        return hasCode(err, 'BUSY');
      });
      assert.ok(Date.now() - started >= 300, 'the live holder was waited out to the timeout');
      assert.match(
        String((busy as { hint?: string }).hint),
        /remove .*main\.lock .*dead process of this host is broken at once, any other once 30 s old/,
      );
      assert.equal(readFileSync(lock, 'utf8'), text, 'a live holder keeps its lock');
      assert.deepEqual((await b.get(KEY)).body, bytes('v1'));

      holder.kill('SIGKILL');
      await exitOf(holder);
      const after = Date.now();
      await new LocalBackend(root, PATIENT).put(KEY, bytes('v3'), { ifMatch: e1 });
      assert.ok(Date.now() - after < AT_ONCE_MS, `took ${Date.now() - after} ms once the holder was gone`);
      assert.equal(existsSync(lock), false);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a lock naming this process is never taken for a dead one', async () => {
    const b = new LocalBackend(root, { lockTimeoutMs: 150 });
    await b.put(KEY, bytes('v1'));
    writeFileSync(lock, holderOf(process.pid));
    await assert.rejects(b.put(KEY, bytes('v2')), (err: unknown) => hasCode(err, 'BUSY'));
    assert.equal(existsSync(lock), true);
  });

  it('a lock of another host or pid namespace is waited on even when its pid does not exist here', async () => {
    const b = new LocalBackend(root, { lockTimeoutMs: 200 });
    const e1 = await b.put(KEY, bytes('v1'));
    const text = `${deadPid()}@not-${processSpace()}\n`;
    writeFileSync(lock, text);
    const started = Date.now();
    await assert.rejects(b.put(KEY, bytes('v2'), { ifMatch: e1 }), (err: unknown) => hasCode(err, 'BUSY'));
    assert.ok(Date.now() - started >= 200);
    assert.equal(readFileSync(lock, 'utf8'), text);
  });

  it('an empty, half-written, garbled or old-format lock falls back to the age rule', async () => {
    const dead = deadPid();
    const space = processSpace();
    // The earlier `host/pid` format names no pid namespace, so it is aged out like garbage.
    const garbage = [
      '',
      `${dead}@`,
      `${dead}@${space}`,
      `${dead}@${space}\nextra`,
      `-${dead}@${space}\n`,
      `0@${space}\n`,
      `@${space}\n`,
      `${dead}@${space} \n`,
      `${os.hostname()}/${dead}\n`,
      'x'.repeat(4096),
    ];
    const b = new LocalBackend(root, { lockStaleMs: 150, lockTimeoutMs: 5_000, lockPollMs: 5 });
    let etag = await b.put(KEY, bytes('v0'));
    for (const [i, text] of garbage.entries()) {
      writeFileSync(lock, text);
      const started = Date.now();
      etag = await b.put(KEY, bytes(`v${i + 1}`), { ifMatch: etag });
      const waited = Date.now() - started;
      assert.ok(
        waited >= 140,
        `${JSON.stringify(text.slice(0, 40))} was broken after ${waited} ms, before it was stale`,
      );
      assert.equal(existsSync(lock), false);
    }
    assert.deepEqual(allFiles(root), [KEY]);
  });

  for (const kind of ['dead-holder', 'stale'] as const) {
    it(`of many writers finding the same ${kind} lock, exactly one passes each compare-and-swap`, async () => {
      const b = new LocalBackend(root);
      let etag = await b.put(KEY, bytes('round 0'));
      for (let round = 1; round <= 20; round++) {
        if (kind === 'stale') {
          writeFileSync(lock, 'crashed-host/1\n');
          const old = new Date(Date.now() - 60_000);
          utimesSync(lock, old, old);
        } else {
          writeFileSync(lock, holderOf(deadPid()));
        }
        const outcomes = await Promise.allSettled(
          Array.from({ length: 8 }, (_, w) => b.put(KEY, bytes(`round ${round} writer ${w}`), { ifMatch: etag })),
        );
        const won = outcomes.filter((o): o is PromiseFulfilledResult<string> => o.status === 'fulfilled');
        assert.equal(won.length, 1, `round ${round}: ${won.length} writers passed the same compare-and-swap`);
        for (const o of outcomes)
          if (o.status === 'rejected') assert.ok(hasCode(o.reason, 'CAS_CONFLICT'), String(o.reason));
        etag = (won[0] as PromiseFulfilledResult<string>).value;
        assert.deepEqual(allFiles(root), [KEY], 'no lock, breaker or renamed-aside file is left');
      }
    });
  }

  it('a breaker lock left by a breaker that died is cleared too', async () => {
    const b = new LocalBackend(root, PATIENT);
    const e1 = await b.put(KEY, bytes('v1'));
    writeFileSync(lock, holderOf(deadPid()));
    // Named as the backend names it: by a hash of the lock file's name, beside it.
    const id = createHash('sha256').update(path.basename(lock)).digest('hex').slice(0, 16);
    const breaker = path.join(path.dirname(lock), `.tmp-lock-breaker-${id}`);
    writeFileSync(breaker, holderOf(deadPid()));
    const started = Date.now();
    await b.put(KEY, bytes('v2'), { ifMatch: e1 });
    assert.ok(Date.now() - started < AT_ONCE_MS, `took ${Date.now() - started} ms`);
    assert.equal(existsSync(breaker), false);
    assert.deepEqual(allFiles(root), [KEY]);
  });

  it('a live breaker lock is waited on: the key lock is not broken behind its back', async () => {
    const b = new LocalBackend(root, { lockTimeoutMs: 200 });
    const e1 = await b.put(KEY, bytes('v1'));
    writeFileSync(lock, holderOf(deadPid()));
    const id = createHash('sha256').update(path.basename(lock)).digest('hex').slice(0, 16);
    const breaker = path.join(path.dirname(lock), `.tmp-lock-breaker-${id}`);
    writeFileSync(breaker, holderOf(process.pid));
    await assert.rejects(b.put(KEY, bytes('v2'), { ifMatch: e1 }), (err: unknown) => hasCode(err, 'BUSY'));
    assert.equal(existsSync(lock), true);
    rmSync(breaker);
    await b.put(KEY, bytes('v2'), { ifMatch: e1 });
    assert.deepEqual(allFiles(root), [KEY]);
  });

  it('a writer SIGKILLed while holding the lock does not hold up the next writer', async () => {
    const b = new LocalBackend(root, PATIENT);
    mkdirSync(path.dirname(path.join(root, KEY)), { recursive: true });
    execFileSync('mkfifo', [path.join(root, KEY)]);
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), HOLD_WORKER, root, KEY], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    try {
      const held = holderOf(child.pid);
      const deadline = Date.now() + 20_000;
      while (!existsSync(lock) || readFileSync(lock, 'utf8') !== held) {
        assert.ok(Date.now() < deadline && child.exitCode === null, `the worker never took the lock: ${stderr}`);
        await sleep(10);
      }
      child.kill('SIGKILL');
      assert.equal(await exitOf(child), 'SIGKILL');
      assert.equal(readFileSync(lock, 'utf8'), held, 'the killed writer left its lock behind');

      const started = Date.now();
      await b.put(KEY, bytes('after the crash'));
      assert.ok(Date.now() - started < AT_ONCE_MS, `took ${Date.now() - started} ms`);
      assert.deepEqual((await b.get(KEY)).body, bytes('after the crash'));
      assert.equal(existsSync(lock), false);
      assert.deepEqual(
        (await b.list('refs/')).map((o) => o.key),
        [KEY],
      );
    } finally {
      child.kill('SIGKILL');
    }
  });
});
