// A real `offshoot serve` process on a throwaway store, plus a line-protocol client and the CLI, for the daemon suites.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventEnvelope, Response } from '../../src/protocol/wire.js';
import { ensureBuilt } from '../support/built-cli.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const bin = path.join(repoRoot, 'offshoot');

/** Builds the CLI unless dist/ is already fresh (shared with every suite that spawns it). */
export const buildCli = ensureBuilt;

/** A finished CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OFFSHOOT_STORE;
  delete env.OFFSHOOT_SOCKET;
  delete env.OFFSHOOT_TOKEN;
  delete env.OFFSHOOT_LEASE_TTL_MS;
  delete env.OFFSHOOT_HOST;
  Object.assign(env, extra);
  return env;
}

/** Sleeps ms milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Polls cond until it holds, failing after ms: a deadline for a hang, generous enough for a loaded 2-core machine
 * (a daemon start, a flush) and no assertion about speed.
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A private temp directory with an initialized store in it. */
export interface StoreDir {
  dir: string;
  store: string;
  /** A path inside the directory (kept short: socket paths must stay under 108 bytes). */
  file(name: string): string;
  /** Runs the CLI against this store. */
  cli(args: string[], env?: NodeJS.ProcessEnv): CliRun;
  cleanup(): void;
}

/** A fresh temp directory (in `parent`, by default the OS temp dir) with `offshoot init` run on a store inside it. */
export function makeStoreDir(parent: string = os.tmpdir()): StoreDir {
  const s = storeDirIn(parent);
  const init = s.cli(['init']);
  assert.equal(init.code, 0, init.stderr);
  return s;
}

/** A fresh temp directory holding a copy of the store at `source` (which is never written), made writable. */
export function copyStoreDir(source: string, parent: string = os.tmpdir()): StoreDir {
  const s = storeDirIn(parent);
  cpSync(source, s.store, { recursive: true });
  chmodTree(s.store);
  return s;
}

// Files copied from a read-only tree keep its modes; the store's writers need their directories writable.
function chmodTree(dir: string): void {
  chmodSync(dir, 0o755);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chmodTree(p);
    else chmodSync(p, 0o644);
  }
}

function storeDirIn(parent: string): StoreDir {
  buildCli();
  const dir = mkdtempSync(path.join(parent, 'offshoot-'));
  const store = path.join(dir, 's');
  const cli = (args: string[], env?: NodeJS.ProcessEnv): CliRun => {
    const r = spawnSync(bin, ['-store', store, ...args], { cwd: dir, env: cleanEnv(env), encoding: 'utf8' });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    dir,
    store,
    file: (name) => path.join(dir, name),
    cli,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// A test that fails before stopping its daemon must not leave it running once the test process ends.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

/** A running daemon process. */
export interface DaemonProcess {
  sock: string;
  proc: ChildProcess;
  /** Everything the daemon wrote to stderr so far. */
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** One request on a fresh connection. */
  request(req: Record<string, unknown>): Promise<Response>;
  /** SIGTERM, then wait for the exit (SIGKILL after ms, by default past the daemon's own 30 s shutdown deadline). */
  stop(ms?: number): Promise<number | null>;
}

/**
 * Starts `offshoot serve` on the store (on sock, or with no -socket flag when sock is null) and waits for it to serve.
 * A launcher (e.g. `unshare --pid --fork --kill-child`) runs the daemon under it; proc is then the launcher's process.
 */
export async function startDaemon(
  s: StoreDir,
  flags: string[] = [],
  env: NodeJS.ProcessEnv = {},
  socket: string | null = s.file('d.sock'),
  launcher: string[] = [],
): Promise<DaemonProcess> {
  const args = ['-store', s.store, 'serve', ...(socket === null ? [] : ['-socket', socket]), ...flags];
  const [cmd, ...pre] = [...launcher, bin];
  const proc = spawn(cmd ?? bin, [...pre, ...args], {
    cwd: s.dir,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  running.add(proc);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  void exited.then(() => running.delete(proc));
  let exitCode: number | null | undefined;
  void exited.then((c) => (exitCode = c));
  await until(() => out.includes('offshoot serving on') || exitCode !== undefined, 'the daemon to start');
  assert.equal(exitCode, undefined, `daemon exited early: ${err}`);
  const sock = /^offshoot serving on (.+)\n$/.exec(out)?.[1] ?? '';
  if (socket !== null) assert.equal(sock, socket);
  const stop = async (ms = 60_000): Promise<number | null> => {
    if (exitCode !== undefined) return exitCode;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), ms);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  return { sock, proc, stderr: () => err, stdout: () => out, exited, request: (req) => request(sock, req), stop };
}

/** A persistent connection speaking the line protocol: one request, one response, in order. */
export class LineClient {
  private buf = '';
  private readonly waiting: Array<(line: string) => void> = [];
  private readonly lines: string[] = [];
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.buf += d;
      for (let i = this.buf.indexOf('\n'); i >= 0; i = this.buf.indexOf('\n')) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        const w = this.waiting.shift();
        if (w) w(line);
        else this.lines.push(line);
      }
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  /** Connects to a daemon socket. */
  static connect(sock: string): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const s = createConnection(sock);
      s.once('connect', () => resolve(new LineClient(s)));
      s.once('error', reject);
    });
  }

  /** The next line the daemon sends, parsed (failing after ms: a hang, not a slow answer on a loaded machine). */
  next<T = Response>(ms = 60_000): Promise<T> {
    const ready = this.lines.shift();
    if (ready !== undefined) return Promise.resolve(JSON.parse(ready) as T);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no line from the daemon in time')), ms);
      this.waiting.push((line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as T);
      });
    });
  }

  /** Sends raw text. */
  send(text: string): void {
    this.socket.write(text);
  }

  /** Sends one request and returns its response. */
  async request(req: Record<string, unknown>): Promise<Response> {
    this.send(`${JSON.stringify(req)}\n`);
    return this.next();
  }

  /** Reads events until one matches, returning every event seen. */
  async eventsUntil(match: (e: EventEnvelope) => boolean, ms = 60_000): Promise<EventEnvelope[]> {
    const seen: EventEnvelope[] = [];
    for (;;) {
      const e = await this.next<EventEnvelope>(ms);
      seen.push(e);
      if (match(e)) return seen;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** One request on a fresh connection. */
export async function request(sock: string, req: Record<string, unknown>): Promise<Response> {
  const c = await LineClient.connect(sock);
  try {
    return await c.request(req);
  } finally {
    c.close();
  }
}

/** Asserts an error response with this code, whose message starts with `daemon: ` and matches re. */
export function assertDaemonError(res: Response, code: string, re?: RegExp): void {
  assert.equal(res.ok, false, `expected an error, got ${JSON.stringify(res)}`);
  assert.equal(res.code, code, `expected code ${code}: ${JSON.stringify(res)}`);
  assert.match(res.error ?? '', /^daemon: /);
  if (re) assert.match(res.error ?? '', re);
}
