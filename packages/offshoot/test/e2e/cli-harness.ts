// The offshoot CLI as users run it: `./offshoot` at the repository root in a child process, against a private
// store in a temp dir, with the stock sqlite3 CLI as the foreign writer and `.dump` as the measure of content.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { offshootBin, repoRoot } from '../support/built-cli.js';

export { ensureBuilt, offshootBin, repoRoot } from '../support/built-cli.js';

/** What one CLI (or sqlite3) run printed and how it exited; code is -1 when a signal ended it. */
export interface CliResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Options of one CLI run: extra environment, the expected exit code (0 unless given; 'any' skips the check). */
export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  expectCode?: number | 'any';
  cwd?: string;
  /** What the run reads on standard input. */
  input?: string;
}

const BIG_OUTPUT = 512 * 1024 * 1024;

// No single CLI run in these suites takes more than seconds; a hung one fails the test instead of the whole run.
const RUN_TIMEOUT_MS = 120_000;

/** The environment every CLI run starts from: the caller's, minus any OFFSHOOT_* setting that would leak in. */
export function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OFFSHOOT_')) env[k] = v;
  return { ...env, ...extra };
}

function checkCode(args: readonly string[], r: CliResult, expect: number | 'any' | undefined): CliResult {
  const want = expect ?? 0;
  if (want !== 'any')
    assert.equal(
      r.code,
      want,
      `offshoot ${args.join(' ')} exited ${r.code}, expected ${want}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
    );
  return r;
}

/** Runs `./offshoot args` to completion and checks its exit code (0 unless opts.expectCode says otherwise). */
export function run(args: readonly string[], opts: RunOptions = {}): CliResult {
  const r = spawnSync(offshootBin, args, {
    cwd: opts.cwd ?? repoRoot,
    env: baseEnv(opts.env),
    ...(opts.input !== undefined ? { input: opts.input } : {}),
    encoding: 'utf8',
    maxBuffer: BIG_OUTPUT,
    timeout: RUN_TIMEOUT_MS,
  });
  if (r.error) throw r.error;
  assert.equal(
    r.signal,
    null,
    `offshoot ${args.join(' ')} was stopped by ${r.signal} (hung past ${RUN_TIMEOUT_MS} ms?)\nstderr: ${r.stderr}`,
  );
  return checkCode(args, { stdout: r.stdout, stderr: r.stderr, code: r.status ?? -1 }, opts.expectCode);
}

/** Starts `./offshoot args` without waiting: for runs that overlap, or that a test kills. */
export function spawnCli(args: readonly string[], opts: Omit<RunOptions, 'expectCode'> = {}): ChildProcess {
  return spawn(offshootBin, args, {
    cwd: opts.cwd ?? repoRoot,
    env: baseEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects a child's output and exit; a run ended by a signal reports code -1 and the signal. */
export function finished(child: ChildProcess): Promise<CliResult & { signal: NodeJS.Signals | null }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ stdout, stderr, code: code ?? -1, signal }));
  });
}

/** Runs `./offshoot args` asynchronously (so several can run at once) and checks its exit code. */
export async function runAsync(args: readonly string[], opts: RunOptions = {}): Promise<CliResult> {
  const r = await finished(spawnCli(args, opts));
  return checkCode(args, r, opts.expectCode);
}

/** Runs SQL on a database file through the stock sqlite3 CLI (-bail), returning what it printed. */
export function sql(path: string, text: string): string {
  const r = spawnSync('sqlite3', ['-bail', path], {
    input: text,
    encoding: 'utf8',
    maxBuffer: BIG_OUTPUT,
    timeout: RUN_TIMEOUT_MS,
  });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, `sqlite3 ${path} failed: ${r.stderr}\n${text}`);
  return r.stdout;
}

/** The `.dump` of a database file, as `sqlite3 path .dump` prints it. */
export function dump(path: string): string {
  const r = spawnSync('sqlite3', [path, '.dump'], { encoding: 'utf8', maxBuffer: BIG_OUTPUT, timeout: RUN_TIMEOUT_MS });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, `sqlite3 ${path} .dump failed: ${r.stderr}`);
  return r.stdout;
}

/** SHA-256 of a file's `.dump`: how large states are compared without keeping their text. */
export async function dumpHash(path: string): Promise<string> {
  const child = spawn('sqlite3', [path, '.dump'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const h = createHash('sha256');
  child.stdout.on('data', (d: Buffer) => h.update(d));
  const r = await finished(child);
  assert.equal(r.code, 0, `sqlite3 ${path} .dump failed: ${r.stderr}`);
  return h.digest('hex');
}

/** A sqlite3 process that stays connected to a database until close(): a foreign writer that has not let go. */
export interface HeldConnection {
  /** Runs more statements on the same connection and resolves once they have run. */
  run(statements: string): Promise<void>;
  /** Sends `.quit` (an open transaction is rolled back) and waits for the process to end. */
  close(): Promise<void>;
}

/**
 * Starts `sqlite3 path`, feeds it statements on stdin and resolves once they have run, leaving the process (and
 * whatever transaction or -wal content the statements left) open.
 */
export async function holdSqlite3(path: string, statements: string): Promise<HeldConnection> {
  const child = spawn('sqlite3', ['-bail', path], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let batch = 0;
  // Each batch ends with a SELECT of a marker of its own, so a batch is known to have run when its marker is printed.
  const send = (text: string): Promise<void> => {
    const marker = `offshoot-e2e-ready-${++batch}.`;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`sqlite3 ${path} was not ready after ${RUN_TIMEOUT_MS} ms: ${err}${out}`));
      }, RUN_TIMEOUT_MS);
      const onData = (): void => {
        if (!out.includes(marker)) return;
        done();
        resolve();
      };
      const onClose = (): void => {
        done();
        reject(new Error(`sqlite3 ${path} exited before it was ready: ${err}${out}`));
      };
      const done = (): void => {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.off('close', onClose);
      };
      child.stdout.on('data', onData);
      child.once('close', onClose);
      child.stdin.write(`${text}\nSELECT '${marker}';\n`);
    });
  };
  await send(statements);
  return {
    run: send,
    close: async () => {
      child.stdin.end('.quit\n');
      await closed;
    },
  };
}

/** Asserts a failed run printed exactly one `offshoot: ...` line on stderr, with no stack trace and nothing on stdout. */
export function assertCleanError(r: CliResult, code: number, message?: RegExp): void {
  assert.equal(r.code, code, `expected exit ${code}, got ${r.code}: ${r.stderr}`);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `expected one stderr line, got:\n${r.stderr}`);
  assert.match(lines[0] ?? '', /^offshoot: \S/);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack frames');
  assert.equal(r.stdout, '', 'a failure prints nothing on stdout');
  if (message) assert.match(r.stderr, message);
}

/** A private directory holding one store; every CLI run through it uses that store and a private TMPDIR. */
export interface TempStore {
  /** The temp directory (removed by cleanup). */
  dir: string;
  /** The store directory (also the checkout root of a local store). */
  store: string;
  /** The environment runs get: OFFSHOOT_STORE and TMPDIR point inside dir. */
  env: NodeJS.ProcessEnv;
  /** A path inside dir. */
  path(...parts: string[]): string;
  run(args: readonly string[], opts?: RunOptions): CliResult;
  runAsync(args: readonly string[], opts?: RunOptions): Promise<CliResult>;
  spawn(args: readonly string[], opts?: Omit<RunOptions, 'expectCode'>): ChildProcess;
  /** Parses the stdout of `args --json`, after checking the exit code. */
  json<T = Record<string, unknown>>(args: readonly string[], opts?: RunOptions): T;
  cleanup(): void;
}

/**
 * Makes a temp dir with a store path in it (not yet initialized unless init is true). TMPDIR points into the same
 * dir, so temp files a killed CLI leaves behind are found by the test and removed with it.
 */
export function tempStore(opts: { init?: boolean } = {}): TempStore {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-'));
  const store = join(dir, 'store');
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const env: NodeJS.ProcessEnv = { OFFSHOOT_STORE: store, TMPDIR: tmp };
  const merge = (o: RunOptions = {}): RunOptions => ({ cwd: dir, ...o, env: { ...env, ...o.env } });
  const ts: TempStore = {
    dir,
    store,
    env,
    path: (...parts) => join(dir, ...parts),
    run: (args, o) => run(args, merge(o)),
    runAsync: (args, o) => runAsync(args, merge(o)),
    spawn: (args, o) => spawnCli(args, merge(o)),
    json: <T>(args: readonly string[], o?: RunOptions) => JSON.parse(run([...args, '--json'], merge(o)).stdout) as T,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
  if (opts.init) ts.run(['init']);
  return ts;
}

/** One branch as `offshoot status --json` reports it (the fields these tests read). */
export interface StatusBranch {
  db: string;
  branch: string;
  state: string;
  storage: string;
  txid: number;
  checkpoints: string[];
  checkpoints_v2: Array<{ name: string; txid: number; created_at?: string }>;
  protected: boolean;
  checked_out: boolean;
  ttl?: string;
  remaining?: string;
  touched_at?: string;
  parent?: string;
  meta?: Record<string, string>;
}

/** `offshoot status --json`, keyed by `db@branch`. */
export function statusMap(ts: TempStore): Map<string, StatusBranch> {
  const doc = ts.json<{ branches: StatusBranch[] }>(['status']);
  return new Map(doc.branches.map((b) => [`${b.db}@${b.branch}`, b]));
}

/** Every file under dir (recursively) whose name satisfies pick, as paths relative to dir, sorted. */
export function filesUnder(dir: string, pick: (name: string) => boolean = () => true): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && pick(e.name))
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}
