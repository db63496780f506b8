import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { SqliteDatabase } from '../../src/sqlite/sqlite-database.js';
import { CaptureEngine, type CaptureEngineOptions } from '../../src/capture/engine.js';
import { ReplicaSink } from './replica-sink.js';

// Only the -wal and the replica are ever read with raw descriptors here: opening and closing the checkout's main
// file from this process would silently drop the locks of the engine's connection.

/** Runs the stock sqlite3 CLI on db with sql on stdin; resolves with stdout, rejects on a non-zero exit. */
export function cli(db: string, sql: string): Promise<string> {
  const feed = cliFeed(db);
  // A CLI that exits early fails the write too; its exit, with its stderr, is the error that says why.
  feed.write(sql).catch(() => undefined);
  return feed.end();
}

/** A stock sqlite3 CLI fed on stdin as the test goes: `write` resolves once the chunk reached the pipe. */
export interface CliFeed {
  write(sql: string): Promise<void>;
  /** Closes stdin; resolves with stdout once the CLI has exited 0, rejects on any other exit. */
  end(): Promise<string>;
}

/** Starts the stock sqlite3 CLI on db with stdin left open for `write`. */
export function cliFeed(db: string): CliFeed {
  const child = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdin.on('error', () => undefined);
  const exited = new Promise<string>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`sqlite3 exited ${code}: ${err}`))));
  });
  exited.catch(() => undefined);
  return {
    write: (sql) => new Promise<void>((resolve, reject) => child.stdin.write(sql, (e) => (e ? reject(e) : resolve()))),
    end: () => {
      child.stdin.end();
      return exited;
    },
  };
}

/** `.dump` of a database, by the stock CLI in its own process. */
export function dump(db: string): Promise<string> {
  return cli(db, '.dump\n');
}

/** `.dump` of a replica, taken from a private copy so the CLI never opens the file the sink writes. */
export async function dumpReplica(replica: string, scratch: string): Promise<string> {
  const copy = path.join(scratch, `dump-${process.hrtime.bigint()}.db`);
  await fs.promises.copyFile(replica, copy);
  try {
    return await dump(copy);
  } finally {
    for (const suffix of ['', '-wal', '-shm']) await fs.promises.rm(copy + suffix, { force: true });
  }
}

/** A temp dir with a WAL-mode checkout (table t) and an open in-process writer on its own connection. */
export interface Fixture {
  dir: string;
  db: string;
  scratch: string;
  writer: SqliteDatabase;
  sink: ReplicaSink;
  engines: CaptureEngine[];
  /** Creates (not starts) an engine on the checkout, the fixture's sink and scratch dir; stopped by cleanup. */
  engine(opts?: Partial<CaptureEngineOptions>): CaptureEngine;
  /** Inserts n rows, each its own transaction. */
  insert(n: number, bytes?: number): void;
  cleanup(): Promise<void>;
}

/** Builds a Fixture; always pair with cleanup() in a finally. */
export function fixture(): Fixture {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  const db = path.join(dir, 'checkout.db');
  const scratch = path.join(dir, 'scratch');
  const writer = openDatabase(db);
  writer.pragma('journal_mode = WAL');
  writer.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0, body BLOB)');
  const sink = new ReplicaSink(path.join(dir, 'replica.db'));
  const engines: CaptureEngine[] = [];
  const ins = writer.prepare('INSERT INTO t(body) VALUES (randomblob(?))');
  return {
    dir,
    db,
    scratch,
    writer,
    sink,
    engines,
    engine(opts = {}) {
      const e = new CaptureEngine({ dbPath: db, scratchDir: scratch, sink, ...opts });
      engines.push(e);
      return e;
    },
    insert(n, bytes = 100) {
      for (let i = 0; i < n; i++) ins.run(bytes);
    },
    async cleanup() {
      for (const e of engines) await e.stop();
      if (writer.open) writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until cond() holds, polling asynchronously so the engine keeps running; fails after timeoutMs. */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** How a convergence wait ended: the last pair of dumps compared, and whether they matched in time. */
export interface Convergence {
  ok: boolean;
  want: string;
  got: string;
  ms: number;
}

/** Drains and compares `.dump` of the checkout and the replica until they match or timeoutMs passes. */
export async function convergeWithin(
  engine: CaptureEngine,
  db: string,
  replica: string,
  scratch: string,
  timeoutMs: number,
): Promise<Convergence> {
  const started = Date.now();
  for (;;) {
    await engine.drainNow();
    const [want, got] = await Promise.all([dump(db), dumpReplica(replica, scratch)]);
    const ms = Date.now() - started;
    if (want === got || ms > timeoutMs) return { ok: want === got, want, got, ms };
    await sleep(50);
  }
}

/** Asserts that the fixture's replica converges to its checkout within timeoutMs. */
export async function converge(engine: CaptureEngine, f: Fixture, timeoutMs = 15_000): Promise<void> {
  const c = await convergeWithin(engine, f.db, f.sink.path, f.dir, timeoutMs);
  if (!c.ok) assert.equal(c.got, c.want, 'replica did not converge to the checkout');
}

/**
 * Wraps every connection's `pragma` or `exec`: just before (or after) the first call with exactly `source`, inject()
 * runs once. Returns the function that restores the original.
 */
export function injectAt(
  method: 'pragma' | 'exec',
  source: string,
  when: 'before' | 'after',
  inject: () => void,
): () => void {
  type Method = (this: SqliteDatabase, src: string, opts?: unknown) => unknown;
  const proto = SqliteDatabase.prototype as unknown as Record<'pragma' | 'exec', Method>;
  const real = proto[method];
  let armed = true;
  proto[method] = function (this: SqliteDatabase, src: string, opts?: unknown): unknown {
    if (!armed || src !== source) return real.call(this, src, opts);
    armed = false;
    if (when === 'before') inject();
    const result = real.call(this, src, opts);
    if (when === 'after') inject();
    return result;
  };
  return () => {
    proto[method] = real;
  };
}
