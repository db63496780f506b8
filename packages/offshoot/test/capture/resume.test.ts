import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { captureStatePath, type CaptureState } from '../../src/capture/capture-state.js';
import { cli, converge, fixture, injectAt, type Fixture } from './capture-fixture.js';

const HOUR = 3_600_000;

function readState(scratch: string): CaptureState {
  return JSON.parse(fs.readFileSync(captureStatePath(scratch), 'utf8')) as CaptureState;
}

// Runs one engine life that captures a few writes and stops; returns its verdict.
async function firstLife(f: Fixture, write: () => unknown = () => f.insert(5)): Promise<{ clean: boolean }> {
  const engine = f.engine({ pollMs: HOUR });
  await engine.start();
  await write();
  await converge(engine, f);
  return engine.stop();
}

test('a clean stop resumes: no rebase, no apply before the next write, then exactly one', async () => {
  const f = fixture();
  try {
    assert.deepEqual(await firstLife(f), { clean: true });
    const state = readState(f.scratch);
    assert.equal(state.clean, true);
    assert.equal(state.main_fp?.ino, String(fs.statSync(f.db).ino), 'the clean state names the main file');
    assert.equal(state.main_fp?.mtime_ns, String(fs.statSync(f.db, { bigint: true }).mtimeNs), 'and its mtime');
    const applies = f.sink.applies;
    const rebases = f.sink.rebases;
    const engine = f.engine({ pollMs: 5 });
    assert.deepEqual(await engine.start(), { resumed: true });
    assert.equal(engine.resumed, true);
    assert.equal(engine.rebases, 0);
    assert.equal(readState(f.scratch).clean, false, 'a crash after resuming must not look clean');
    await sleep(100);
    assert.equal(f.sink.applies, applies, 'nothing is re-applied after a resume');
    f.insert(1);
    await engine.drainNow();
    assert.equal(f.sink.applies, applies + 1);
    assert.equal(f.sink.rebases, rebases);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test('writes while capture was down (insert, RESTART, insert) make the next engine rebase', async () => {
  const f = fixture();
  try {
    assert.deepEqual(await firstLife(f), { clean: true });
    f.insert(1);
    f.writer.pragma('wal_checkpoint(RESTART)');
    f.insert(1);
    const engine = f.engine({ pollMs: HOUR });
    assert.deepEqual(await engine.start(), { resumed: false });
    assert.ok(engine.rebases >= 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test('a same-size in-place UPDATE folded by a last close while down is caught by the fingerprint', async () => {
  const f = fixture();
  try {
    f.writer.close();
    assert.deepEqual(await firstLife(f, () => cli(f.db, 'INSERT INTO t(body) VALUES (randomblob(100));\n')), {
      clean: true,
    });
    const size = fs.statSync(f.db).size;
    await cli(f.db, 'UPDATE t SET n = 7 WHERE id = 1;\n');
    assert.ok(!fs.existsSync(`${f.db}-wal`), 'the CLI was the last connection: it folded and deleted -wal');
    assert.equal(fs.statSync(f.db).size, size, 'the main file kept its size');
    const engine = f.engine({ pollMs: HOUR });
    assert.deepEqual(await engine.start(), { resumed: false });
    assert.equal(engine.rebases, 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test("a write between shutdown's unlock and its RESTART is read back: the stop stays clean and the next start resumes", async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(3);
    await converge(engine, f);
    const applies = f.sink.applies;
    const restore = injectAt('pragma', 'wal_checkpoint(RESTART)', 'before', () => f.insert(1));
    let verdict;
    try {
      verdict = await engine.stop();
    } finally {
      restore();
    }
    assert.deepEqual(verdict, { clean: true });
    assert.equal(f.sink.applies, applies + 1, 'the folded commit was applied from the -wal');
    const next = f.engine({ pollMs: HOUR });
    assert.deepEqual(await next.start(), { resumed: true });
    await converge(next, f);
  } finally {
    await f.cleanup();
  }
});

test("a reset between shutdown's unlock and its RESTART is detected: not clean, next start rebases", async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(3);
    await converge(engine, f);
    const restore = injectAt('pragma', 'wal_checkpoint(RESTART)', 'before', () => {
      f.insert(1);
      f.writer.pragma('wal_checkpoint(PASSIVE)');
      f.insert(1);
    });
    let verdict;
    try {
      verdict = await engine.stop();
    } finally {
      restore();
    }
    assert.deepEqual(verdict, { clean: false });
    assert.equal(readState(f.scratch).clean, false);
    const next = f.engine({ pollMs: HOUR });
    assert.deepEqual(await next.start(), { resumed: false });
    assert.equal(next.rebases, 1);
    await converge(next, f);
  } finally {
    await f.cleanup();
  }
});

test("a write right after shutdown's RESTART is detected: not clean", async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(3);
    await converge(engine, f);
    // Checkpointed at once, so the main file already holds the write when shutdown stamps it.
    const restore = injectAt('pragma', 'wal_checkpoint(RESTART)', 'after', () => {
      f.insert(1);
      f.writer.pragma('wal_checkpoint(PASSIVE)');
    });
    let verdict;
    try {
      verdict = await engine.stop();
    } finally {
      restore();
    }
    assert.deepEqual(verdict, { clean: false });
    const next = f.engine({ pollMs: HOUR });
    assert.deepEqual(await next.start(), { resumed: false });
    await converge(next, f);
  } finally {
    await f.cleanup();
  }
});

test("a write folded by shutdown's own TRUNCATE is detected by the fingerprint", async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(3);
    await converge(engine, f);
    const restore = injectAt('pragma', 'wal_checkpoint(TRUNCATE)', 'before', () => f.insert(1));
    let verdict;
    try {
      verdict = await engine.stop();
    } finally {
      restore();
    }
    assert.deepEqual(verdict, { clean: false });
    assert.equal(fs.statSync(`${f.db}-wal`).size, 0, 'TRUNCATE did fold the injected write');
    const next = f.engine({ pollMs: HOUR });
    assert.deepEqual(await next.start(), { resumed: false });
    await converge(next, f);
  } finally {
    await f.cleanup();
  }
});

test('a corrupt state file reads as absent: the engine rebases', async () => {
  const f = fixture();
  try {
    assert.deepEqual(await firstLife(f), { clean: true });
    fs.writeFileSync(captureStatePath(f.scratch), '{"clean": true, "main_fp": ');
    const engine = f.engine({ pollMs: HOUR });
    assert.deepEqual(await engine.start(), { resumed: false });
    assert.equal(engine.rebases, 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test('stop before start is a no-op, a second start is refused, a missing checkout fails to start', async () => {
  const f = fixture();
  try {
    const idle = f.engine();
    assert.deepEqual(await idle.stop(), { clean: false });
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    await assert.rejects(engine.start(), { code: 'INVALID_ARGUMENT' });
    const missing = f.engine({ dbPath: `${f.db}.missing` });
    await assert.rejects(missing.start(), { code: 'NOT_FOUND' });
    assert.ok(!fs.existsSync(`${f.db}.missing`), 'the engine never creates a checkout');
  } finally {
    await f.cleanup();
  }
});
