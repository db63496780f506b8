import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OffshootError } from '../errors.js';
import { findOffshootBinary } from './find-binary.js';

/** Options of `startDaemon`. */
export interface StartDaemonOptions {
  /** The offshoot executable; default OFFSHOOT_BIN, else `offshoot` on PATH. */
  bin?: string;
  /** Where the store and socket go; default a fresh temp dir, removed again by `stop()`. */
  workdir?: string;
  /** How long `init` plus daemon start-up may take; default 10000 ms. */
  timeoutMs?: number;
  /** Extra `serve` flags, e.g. `['-flush-every', '0']`. */
  serveArgs?: string[];
}

/** A daemon started for tests, on a private store. */
export interface TestDaemon {
  /** The unix socket to `connect` to. */
  sock: string;
  /** The store directory. */
  store: string;
  proc: ChildProcess;
  /** The last `n` lines the daemon wrote to stderr (default 20), for failure messages. */
  stderrTail(n?: number): string;
  /** SIGTERM, then SIGKILL after `timeoutMs` (default 10000); idempotent. */
  stop(timeoutMs?: number): Promise<void>;
}

/** The earlier testkit's name for a started daemon. */
export type DaemonHandle = TestDaemon;

/**
 * What `seedOnce` and `forkPerTest` need of a daemon: its socket, and optionally its stderr for error messages. A
 * daemon started elsewhere (say by a jest global setup, in another process) is just `{ sock }`.
 */
export type DaemonRef = Pick<TestDaemon, 'sock'> & Partial<Pick<TestDaemon, 'stderrTail'>>;

const KEPT_STDERR_LINES = 500;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function canConnect(sock: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect(sock);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function initStore(bin: string, store: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(bin, ['-store', store, 'init'], { timeout: timeoutMs }, (err, _stdout, stderr) => {
      if (err === null) resolve();
      else
        reject(
          new OffshootError('UNAVAILABLE', `offshoot init failed: ${stderr.trim() || err.message}`, {
            hint: `check that ${bin} is a working offshoot`,
            cause: err,
          }),
        );
    });
  });
}

/** Initializes a temp store and runs `offshoot serve` on it, resolving once the socket accepts connections. */
export async function startDaemon(opts: StartDaemonOptions = {}): Promise<TestDaemon> {
  const bin = findOffshootBinary(opts.bin);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const ownsWorkdir = opts.workdir === undefined;
  const workdir = opts.workdir ?? mkdtempSync(join(tmpdir(), 'offshoot-testkit-'));
  const store = join(workdir, 'store');
  const sock = join(workdir, 'daemon.sock');
  const started = Date.now();
  try {
    await initStore(bin, store, timeoutMs);
  } catch (err) {
    if (ownsWorkdir) rmSync(workdir, { recursive: true, force: true });
    throw err;
  }

  const proc = spawn(bin, ['-store', store, 'serve', '-socket', sock, ...(opts.serveArgs ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderrLines: string[] = [];
  let partial = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (text: string) => {
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    stderrLines.push(...parts);
    if (stderrLines.length > KEPT_STDERR_LINES) stderrLines.splice(0, stderrLines.length - KEPT_STDERR_LINES);
  });
  proc.stdout?.resume();
  // 'close' comes after 'exit' once the daemon's pipes are closed too: after stop() nothing of it is left.
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  // A test runner that dies without calling stop() must not leave the daemon behind.
  const killOnExit = (): void => {
    proc.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const stderrTail = (n = 20): string => [...stderrLines, ...(partial === '' ? [] : [partial])].slice(-n).join('\n');
  let stopping: Promise<void> | undefined;
  const stop = (stopTimeoutMs = 10_000): Promise<void> => {
    stopping ??= (async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), stopTimeoutMs)));
        const outcome = await Promise.race([exited.then(() => 'exited' as const), deadline]);
        clearTimeout(timer);
        if (outcome === 'timeout') {
          proc.kill('SIGKILL');
          await exited;
        }
      }
      process.off('exit', killOnExit);
      if (ownsWorkdir) rmSync(workdir, { recursive: true, force: true });
    })();
    return stopping;
  };

  while (!(await canConnect(sock))) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await stop();
      throw new OffshootError(
        'UNAVAILABLE',
        `offshoot serve exited during start-up (${proc.exitCode ?? proc.signalCode}):\n${stderrTail()}`,
        {
          hint: 'read the daemon output above',
        },
      );
    }
    if (Date.now() - started > timeoutMs) {
      await stop();
      throw new OffshootError(
        'TIMEOUT',
        `offshoot serve did not accept connections within ${timeoutMs} ms:\n${stderrTail()}`,
        {
          hint: 'raise timeoutMs, or read the daemon output above',
        },
      );
    }
    await sleep(25);
  }
  return { sock, store, proc, stderrTail, stop };
}
