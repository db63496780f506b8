import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { fail, hasCode } from '../../src/core/errors.js';
import { captureStatePath } from '../../src/capture/capture-state.js';
import { cli, cliFeed, converge, dump, fixture, injectAt, waitFor } from './capture-fixture.js';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';

const HOUR = 3_600_000;

function readState(scratch: string): { off: number; clean: boolean; main_fp?: unknown } {
  return JSON.parse(fs.readFileSync(captureStatePath(scratch), 'utf8')) as {
    off: number;
    clean: boolean;
    main_fp?: unknown;
  };
}

test('an in-process writer and the stock CLI writer are both captured', async () => {
  const f = fixture();
  try {
    const engine = f.engine();
    assert.deepEqual(await engine.start(), { resumed: false });
    assert.equal(engine.rebases, 1);
    f.insert(5);
    await cli(
      f.db,
      '.timeout 5000\nINSERT INTO t(body) VALUES (randomblob(3000));\nUPDATE t SET n = n + 1 WHERE id <= 3;\n',
    );
    f.writer.exec('DELETE FROM t WHERE id = 2');
    await converge(engine, f);
    assert.match(await dump(f.sink.path), /INSERT INTO t VALUES\(6,0,X'/);
    assert.ok(f.sink.applies >= 8, `every transaction applied (${f.sink.applies})`);
    assert.equal(engine.rebases, 1);
  } finally {
    await f.cleanup();
  }
});

test('the read lock survives the startup copy and a resume: a foreign CLI commit and exit leaves -wal', async () => {
  const f = fixture();
  try {
    f.writer.close();
    const first = f.engine({ pollMs: HOUR });
    await first.start();
    await cli(f.db, 'INSERT INTO t(body) VALUES (randomblob(10));\n');
    assert.ok(fs.existsSync(`${f.db}-wal`), 'the CLI, not the last connection, could not fold and delete -wal');
    assert.ok(fs.statSync(`${f.db}-wal`).size > 32);
    await converge(first, f);
    assert.deepEqual(await first.stop(), { clean: true });

    const second = f.engine({ pollMs: HOUR });
    assert.deepEqual(await second.start(), { resumed: true });
    await cli(f.db, 'INSERT INTO t(body) VALUES (randomblob(10));\n');
    assert.ok(fs.existsSync(`${f.db}-wal`), 'resuming kept the locks too');
    await converge(second, f);
  } finally {
    await f.cleanup();
  }
});

test('takeover under writes: 64 transactions trigger one clean takeover, 40 more follow the restart', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ takeoverTransactions: 64 });
    await engine.start();
    f.insert(64);
    await waitFor('the takeover', () => engine.takeovers === 1);
    f.insert(40);
    await converge(engine, f);
    assert.equal(engine.rebases, 1, 'the takeover and its restart were followed without a rebase');
    assert.equal(engine.takeovers, 1);
    assert.equal((await dump(f.db)).match(/INSERT INTO t VALUES/g)?.length, 104);
  } finally {
    await f.cleanup();
  }
});

test('takeover without the ticker: drainNow drives the takeover and follows the lazy restart', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR, takeoverTransactions: 64 });
    await engine.start();
    f.insert(60);
    await engine.drainNow();
    assert.equal(engine.takeovers, 0);
    f.insert(10);
    await engine.drainNow();
    assert.equal(engine.takeovers, 1);
    const header = fs.readFileSync(`${f.db}-wal`).subarray(0, 32);
    f.insert(5);
    assert.ok(!fs.readFileSync(`${f.db}-wal`).subarray(0, 32).equals(header), 'the next writer reset the WAL');
    await engine.drainNow();
    assert.equal(f.sink.applies, 75);
    assert.equal(engine.rebases, 1);
    assert.equal(engine.takeovers, 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test('by default a takeover waits for 256 frames of -wal, however many transactions that takes', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(40);
    await engine.drainNow();
    assert.equal(engine.takeovers, 0, '40 small transactions stay under 256 frames');
    // Rows of a page each: every transaction adds at least one frame.
    f.insert(260, 3000);
    await engine.drainNow();
    assert.equal(engine.takeovers, 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

const salt1 = (walPath: string): number => fs.readFileSync(walPath).readUInt32BE(16);

test("while the takeover's own pin is dropped for its backfill, the helper's pin keeps any checkpoint from resetting the WAL", async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR, takeoverTransactions: 2 });
    await engine.start();
    const walPath = `${f.db}-wal`;
    f.insert(2);
    const before = salt1(walPath);
    let foreignTruncate: number | undefined;
    // A commit, a foreign PASSIVE, then a foreign TRUNCATE: unpinned, these would fold and reset the generation.
    const restore = injectAt('pragma', 'wal_checkpoint(PASSIVE)', 'before', () => {
      f.insert(1);
      f.writer.pragma('wal_checkpoint(PASSIVE)');
      f.writer.pragma('busy_timeout = 20');
      const [row] = f.writer.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      f.writer.pragma('busy_timeout = 5000');
      foreignTruncate = row?.busy;
      f.insert(1);
    });
    try {
      await engine.drainNow();
    } finally {
      restore();
    }
    assert.equal(foreignTruncate, 1, 'the foreign TRUNCATE stayed busy');
    assert.equal(salt1(walPath), before, 'nothing reset the WAL during the takeover');
    assert.equal(f.sink.applies, 4, 'the commits racing the backfill were captured');
    assert.equal(engine.takeovers, 1, 'the racing commits were folded under the write lock');
    f.insert(2);
    assert.notEqual(salt1(walPath), before, 'the next writer reset the WAL');
    await converge(engine, f);
    assert.equal(engine.rebases, 1, 'the reset that followed was the expected one');
  } finally {
    await f.cleanup();
  }
});

test('commits that land while the takeover waits for the write lock are captured before it folds them', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR, takeoverTransactions: 8 });
    await engine.start();
    f.insert(8);
    // The first commit makes the backfill partial, so the takeover needs the write lock; three more land just
    // before it is taken.
    const restorePassive = injectAt('pragma', 'wal_checkpoint(PASSIVE)', 'before', () => f.insert(1));
    const restoreLock = injectAt('exec', 'BEGIN IMMEDIATE', 'before', () => f.insert(3));
    try {
      await engine.drainNow();
    } finally {
      restorePassive();
      restoreLock();
    }
    assert.equal(engine.takeovers, 1);
    assert.equal(f.sink.applies, 12, 'every commit was applied once');
    const [row] = f.writer.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
    assert.equal(row?.checkpointed, row?.log, 'the takeover folded the whole -wal');
    f.insert(2);
    await converge(engine, f);
    assert.equal(engine.rebases, 1);
  } finally {
    await f.cleanup();
  }
});

test('a capture that lags its writer may take the write lock once its backfill has caught up past resetFrames', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: 1, takeoverFrames: 16, resetFrames: 48, idleTakeoverMs: HOUR });
    await engine.start();
    // A backlog of 100 frames, written before the ticker runs: its drain stops at 16 frames, when a takeover is due,
    // and the takeover's backfill captures the other 84. A commit racing the backfill makes it partial.
    f.insert(100);
    const restore = injectAt('pragma', 'wal_checkpoint(PASSIVE)', 'before', () => f.insert(1));
    try {
      await waitFor('a takeover', () => engine.takeovers === 1);
    } finally {
      restore();
    }
    const [row] = f.writer.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
    assert.equal(row?.checkpointed, row?.log, 'the takeover folded the whole -wal under the write lock');
    f.insert(2);
    await converge(engine, f);
    assert.equal(f.sink.applies, 103, 'every commit was applied once');
    assert.equal(engine.rebases, 1);
  } finally {
    await f.cleanup();
  }
});

test('after a takeover the engine still pins the -wal: a foreign TRUNCATE cannot fold the new generation away', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR, takeoverTransactions: 8 });
    await engine.start();
    f.insert(8);
    await engine.drainNow();
    assert.equal(engine.takeovers, 1);
    const walPath = `${f.db}-wal`;
    const before = salt1(walPath);
    f.insert(1);
    assert.equal(salt1(walPath), before + 1, 'the writer reset the WAL once');
    f.writer.pragma('busy_timeout = 20');
    const [row] = f.writer.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    f.writer.pragma('busy_timeout = 5000');
    assert.equal(row?.busy, 1, 'the new generation stays in the -wal until it is captured');
    f.insert(1);
    assert.equal(salt1(walPath), before + 1, 'no second reset');
    await converge(engine, f);
    assert.equal(engine.rebases, 1);
  } finally {
    await f.cleanup();
  }
});

test('a stock CLI writer that never pauses: takeovers fold the -wal under the write lock and nothing is lost', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ takeoverFrames: 16, resetFrames: 48 });
    await engine.start();
    const walPath = `${f.db}-wal`;
    f.insert(1);
    const before = salt1(walPath);
    // The CLI is fed without a pause until the engine has folded the -wal twice. On a loaded machine the CLI can
    // outrun the capture, whose backlog would then grow without end: it is fed only while that backlog is short.
    const writer = cliFeed(f.db);
    await writer.write('.timeout 5000\n');
    const chunk = 50;
    const lead = 2000;
    let n = 0;
    while (engine.takeovers < 2) {
      if (n - f.sink.applies >= lead) {
        await waitFor('the capture to catch up', () => n - f.sink.applies < lead / 2, 120_000);
        continue;
      }
      await writer.write('INSERT INTO t(body) VALUES (randomblob(100));\n'.repeat(chunk));
      n += chunk;
    }
    await writer.end();
    await converge(engine, f);
    assert.equal(f.sink.applies, n + 1, 'every transaction was applied once');
    assert.ok(engine.takeovers >= 2, `the -wal was folded repeatedly (${engine.takeovers} takeovers)`);
    assert.notEqual(salt1(walPath), before, 'the writer reset the WAL');
    assert.equal(engine.rebases, 1);
  } finally {
    await f.cleanup();
  }
});

test('captured bursts write no state: only start, rebases and a clean stop do', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    const saves = engine.stateSaves;
    assert.equal(readState(f.scratch).clean, false, 'from the start a crash cannot look like a clean stop');
    f.insert(50);
    await engine.drainNow();
    f.insert(5);
    await engine.drainNow();
    assert.equal(engine.stateSaves, saves, 'captured transactions cost the writer no competing fsyncs');
    assert.equal((await engine.stop()).clean, true);
    const state = readState(f.scratch);
    assert.equal(state.clean, true);
    assert.ok(state.main_fp !== undefined, "a clean stop records the main file's fingerprint");
  } finally {
    await f.cleanup();
  }
});

test('foreign PASSIVE checkpoints, and foreign RESTART/TRUNCATE attempts, cause no extra rebase', async () => {
  const f = fixture();
  try {
    const engine = f.engine();
    await engine.start();
    for (let i = 0; i < 10; i++) {
      f.insert(1);
      f.writer.pragma('wal_checkpoint(PASSIVE)');
    }
    await cli(f.db, '.timeout 5000\nINSERT INTO t(body) VALUES (randomblob(50));\nPRAGMA wal_checkpoint(PASSIVE);\n');
    f.writer.pragma('busy_timeout = 20');
    for (const mode of ['RESTART', 'TRUNCATE']) {
      const [row] = f.writer.pragma(`wal_checkpoint(${mode})`) as Array<{ busy: number }>;
      assert.equal(row?.busy, 1, `the engine's read lock keeps a foreign ${mode} from resetting the WAL`);
    }
    f.writer.pragma('busy_timeout = 5000');
    f.insert(3);
    await converge(engine, f);
    assert.equal(engine.rebases, 1);
  } finally {
    await f.cleanup();
  }
});

test('drainNow captures a pending transaction itself; with nothing pending it returns fast without applying', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(1);
    assert.equal(f.sink.applies, 0);
    await engine.drainNow();
    assert.equal(f.sink.applies, 1);
    const t0 = performance.now();
    await engine.drainNow();
    // Half the 2 s a drain may spend folding the WAL: an idle one folds nothing, however loaded the machine.
    assert.ok(performance.now() - t0 < 1_000, 'an idle drainNow is quick');
    assert.equal(f.sink.applies, 1);
  } finally {
    await f.cleanup();
  }
});

test('a failing apply fails drainNow and stops the engine, recording the last applied position', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(2);
    await engine.drainNow();
    const applied = fs.statSync(`${f.db}-wal`).size;
    f.sink.failWith = fail('IO', 'replica disk is full', { hint: 'free space' });
    f.insert(1);
    await assert.rejects(
      engine.drainNow(),
      (err: unknown) => hasCode(err, 'IO') && /disk is full/.test((err as Error).message),
    );
    assert.equal(engine.failure?.code, 'IO');
    await assert.rejects(engine.drainNow(), (err: unknown) => hasCode(err, 'IO'), 'the engine stays stopped');
    const state = readState(f.scratch);
    assert.equal(
      state.off,
      applied,
      'the failure recorded the position of the last applied transaction, not of the one that failed',
    );
    assert.equal(state.clean, false);
    assert.deepEqual(await engine.stop(), { clean: false });
  } finally {
    await f.cleanup();
  }
});

test('a failing apply on the ticker path stops the engine too', async () => {
  const f = fixture();
  try {
    const engine = f.engine();
    await engine.start();
    f.sink.failWith = new Error('sink exploded');
    f.insert(1);
    await waitFor('the fatal error', () => engine.failure !== undefined);
    assert.match(engine.failure?.message ?? '', /sink exploded/);
    await assert.rejects(engine.drainNow(), /sink exploded/);
    assert.deepEqual(await engine.stop(), { clean: false });
    assert.equal(readState(f.scratch).clean, false);
  } finally {
    await f.cleanup();
  }
});

test('lag reports the backlog, then 0 once drained', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    assert.equal(engine.lag(), 0);
    f.insert(20, 2000);
    const size = fs.statSync(`${f.db}-wal`).size;
    assert.equal(engine.lag(), size);
    await engine.drainNow();
    assert.equal(engine.lag(), 0);
  } finally {
    await f.cleanup();
  }
});

test("a restart landing between lag's position loads and its stat under-reports (0), never over-reports", async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(20, 2000);
    await engine.drainNow();
    f.insert(3, 2000);
    const backlog = engine.lag();
    assert.ok(backlog > 0);
    // lag() is synchronous, so no engine step can interleave; what can change between its loads and its stat is
    // the file. Here the stat sees it as a TRUNCATE plus one new commit would leave it: far below the position.
    const walPath = `${f.db}-wal`;
    const mutableFs = fs as { statSync: typeof fs.statSync };
    const realStat = fs.statSync;
    mutableFs.statSync = ((p: fs.PathLike, opts?: fs.StatSyncOptions) => {
      const st = realStat(p, opts);
      return String(p) === walPath && st !== undefined ? Object.assign(st, { size: 32 + 24 + 4096 }) : st;
    }) as typeof fs.statSync;
    syncBuiltinESMExports();
    let lag: number;
    try {
      lag = engine.lag();
    } finally {
      mutableFs.statSync = realStat;
      syncBuiltinESMExports();
    }
    assert.equal(lag, 0);
    assert.equal(engine.lag(), backlog, 'the real stat is back');
  } finally {
    await f.cleanup();
  }
});

test('after an idle takeover and a write, lag is 0: the old generation is a dead tail, not a backlog', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ idleTakeoverMs: 150 });
    await engine.start();
    f.insert(30, 3000);
    await waitFor('the idle takeover', () => engine.takeovers === 1);
    const applies = f.sink.applies;
    f.insert(1, 10);
    await waitFor('the write after the restart', () => f.sink.applies === applies + 1);
    assert.equal(engine.lag(), 0);
    assert.ok(fs.statSync(`${f.db}-wal`).size > 30 * 3000, 'RESTART left the old generation in the file');
    assert.equal(engine.rebases, 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test('a foreign reader pinning an old snapshot postpones the takeover at once, without stalling the event loop', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR, takeoverTransactions: 4 });
    await engine.start();
    f.insert(2);
    const pin = openDatabase(f.db);
    pin.exec('BEGIN');
    pin.prepare('SELECT count(*) FROM t').get();
    f.insert(4);
    let worst = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 5);
    await engine.drainNow();
    clearInterval(timer);
    assert.equal(engine.takeovers, 0, 'a takeover that cannot fold the -wal is postponed, not counted');
    assert.equal(f.sink.applies, 6);
    // The bound leaves room for a loaded machine; the takeover neither waits for the reader nor busy-loops.
    assert.ok(worst < 1000, `no synchronous stall of the event loop (worst gap ${worst.toFixed(0)} ms)`);
    pin.exec('COMMIT');
    pin.close();
    f.insert(1);
    await engine.drainNow();
    assert.equal(engine.takeovers, 1, 'the postponed takeover ran once the reader was gone');
    await converge(engine, f);
    assert.equal(engine.rebases, 1);
  } finally {
    await f.cleanup();
  }
});
