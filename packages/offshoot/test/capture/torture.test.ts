import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { CaptureEngine } from '../../src/capture/engine.js';
import { convergeWithin } from './capture-fixture.js';
import { ReplicaSink } from './replica-sink.js';

const SECONDS = Number(process.env.OFFSHOOT_TORTURE_SECONDS ?? 20);
const CONVERGE_MS = 15_000;
const BOUNCE_EVERY = 10;
// The 4-transaction script, looped so that a kill within 0-200 ms often lands mid-stream.
const LOOPS = 20;
const SCRIPT =
  '.timeout 5000\n' +
  [
    'INSERT INTO t(body) VALUES (randomblob(200));',
    'UPDATE t SET n = n + 1 WHERE id IN (SELECT id FROM t ORDER BY random() LIMIT 5);',
    'INSERT INTO t(body) SELECT randomblob(200) FROM t LIMIT 3;',
    'DELETE FROM t WHERE id = (SELECT id FROM t ORDER BY random() LIMIT 1);',
  ]
    .join('\n')
    .concat('\n')
    .repeat(LOOPS);
// Keeps the table (and so every .dump) bounded however long the run.
const KEEP_ROWS = 1500;

// Runs the script in a stock sqlite3 process; with killAfterMs, SIGKILLs it then. Resolves true if it was killed.
function writerRound(db: string, killAfterMs: number | undefined): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn('sqlite3', [db], { stdio: ['pipe', 'ignore', 'ignore'] });
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.stdin.on('error', () => {});
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      resolve(signal === 'SIGKILL');
    });
    child.stdin.end(SCRIPT);
  });
}

test(`torture: a SIGKILLed CLI writer and engine bounces for ${SECONDS} s never diverge`, {
  timeout: (SECONDS + 300) * 1000,
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  const db = path.join(dir, 'checkout.db');
  const scratch = path.join(dir, 'scratch');
  // A foreign connection stays open throughout, as an agent's would; it also prunes between rounds.
  const keeper = openDatabase(db);
  keeper.pragma('journal_mode = WAL');
  keeper.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0, body BLOB)');
  const prune = keeper.prepare(`DELETE FROM t WHERE id <= (SELECT max(id) FROM t) - ${KEEP_ROWS}`);
  const sink = new ReplicaSink(path.join(dir, 'replica.db'));
  // The engine's recent log lines, printed only if the replica diverges.
  const recent: string[] = [];
  const log = (msg: string): void => {
    recent.push(`round ${stats.rounds}: ${msg}`);
    if (recent.length > 40) recent.shift();
  };
  const make = (): CaptureEngine => new CaptureEngine({ dbPath: db, scratchDir: scratch, sink, log });
  let engine = make();
  const stats = {
    rounds: 0,
    kills: 0,
    bounces: 0,
    cleanStops: 0,
    resumes: 0,
    rebases: 0,
    takeovers: 0,
    worstConvergeMs: 0,
  };
  let divergence: { round: number; want: string; got: string } | undefined;
  // The engine shares this event loop: the longest gap between 10 ms ticks is how long it ever blocked it.
  let worstStallMs = 0;
  let lastTick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    worstStallMs = Math.max(worstStallMs, now - lastTick - 10);
    lastTick = now;
  }, 10);
  try {
    await engine.start();
    const end = Date.now() + SECONDS * 1000;
    while (Date.now() < end) {
      stats.rounds++;
      const kill = Math.random() < 0.5 ? Math.floor(Math.random() * 200) : undefined;
      if (await writerRound(db, kill)) {
        stats.kills++;
        log(`writer SIGKILLed after ${kill} ms`);
      }
      prune.run();
      const c = await convergeWithin(engine, db, sink.path, dir, CONVERGE_MS);
      stats.worstConvergeMs = Math.max(stats.worstConvergeMs, c.ms);
      if (!c.ok) {
        divergence = { round: stats.rounds, want: c.want, got: c.got };
        break;
      }
      if (stats.rounds % BOUNCE_EVERY === 0) {
        stats.rebases += engine.rebases;
        stats.takeovers += engine.takeovers;
        const { clean } = await engine.stop();
        if (clean) stats.cleanStops++;
        engine = make();
        const { resumed } = await engine.start();
        log(`bounced: stop ${clean ? 'clean' : 'not clean'}, start ${resumed ? 'resumed' : 'rebased'}`);
        stats.bounces++;
        if (resumed) stats.resumes++;
      }
    }
  } finally {
    clearInterval(ticker);
    stats.rebases += engine.rebases;
    stats.takeovers += engine.takeovers;
    await engine.stop();
    keeper.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `torture: ${stats.rounds} rounds, ${stats.kills} kills, ${stats.bounces} bounces (${stats.cleanStops} clean), ` +
      `${stats.resumes} resumes, ${stats.rebases} rebases, ${stats.takeovers} takeovers, ` +
      `worst convergence ${stats.worstConvergeMs} ms, worst event-loop stall ${Math.round(worstStallMs)} ms, ` +
      `${divergence === undefined ? 0 : 1} divergence`,
  );
  if (divergence !== undefined) {
    const want = new Set(divergence.want.split('\n'));
    const got = new Set(divergence.got.split('\n'));
    const missing = [...want].filter((l) => !got.has(l)).slice(0, 10);
    const extra = [...got].filter((l) => !want.has(l)).slice(0, 10);
    console.log(
      ['engine log:', ...recent, 'missing from the replica:', ...missing, 'only in the replica:', ...extra].join('\n'),
    );
  }
  if (divergence !== undefined)
    assert.equal(divergence.got, divergence.want, `replica diverged in round ${divergence.round}`);
  assert.ok(stats.rounds > 0);
  assert.ok(stats.rebases >= 1, 'the first start rebases');
  if (stats.bounces > 0) assert.ok(stats.resumes >= 1, 'at least one bounce is a proven clean resume');
});
