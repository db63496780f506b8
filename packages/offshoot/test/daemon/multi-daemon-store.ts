// Several real `offshoot serve` processes on one store, each with its own socket and checkout root as on separate
// machines: the harness the many-daemons suites (and their torture) share.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3_ENDPOINT, createTestBucket, type TestBucket } from '../store/s3-test-env.js';
import { S3_REGION } from '../s3e2e/s3-store.js';
import type { Response } from '../../src/protocol/wire.js';
import { LineClient, buildCli, startDaemon, type CliRun, type DaemonProcess, type StoreDir } from './daemon-process.js';

const bin = path.join(fileURLToPath(new URL('../../../../', import.meta.url)), 'offshoot');

/** One store served by many daemons: a local directory or a fresh bucket on the S3 test server. */
export interface SharedStore extends StoreDir {
  kind: 'local' | 's3';
  /** The environment every process against this store needs (S3 settings, a short lease). */
  env: NodeJS.ProcessEnv;
  /** Starts daemon i on its own socket and checkout root (with extra environment, under a launcher). */
  daemon(i: number, flags?: string[], opts?: { env?: NodeJS.ProcessEnv; launcher?: string[] }): Promise<DaemonProcess>;
  /** Empties and removes everything (the bucket too). */
  remove(): Promise<void>;
}

/** A fresh initialized store of the given kind; leaseMs sets every daemon's session lease. */
export async function sharedStore(kind: 'local' | 's3', leaseMs: number): Promise<SharedStore> {
  buildCli();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-md-'));
  let bucket: TestBucket | undefined;
  let store = path.join(dir, 's');
  const env: NodeJS.ProcessEnv = { OFFSHOOT_LEASE_TTL_MS: String(leaseMs) };
  if (kind === 's3') {
    bucket = await createTestBucket();
    store = `s3://${bucket.name}/team`;
    Object.assign(env, {
      OFFSHOOT_S3_ENDPOINT: S3_ENDPOINT,
      OFFSHOOT_S3_PATH_STYLE: '1',
      OFFSHOOT_S3_REGION: S3_REGION,
      OFFSHOOT_CHECKOUTS: path.join(dir, 'cli-checkouts'),
    });
  }
  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}): CliRun => {
    const full = { ...process.env, ...env, ...extra };
    delete full.OFFSHOOT_STORE;
    delete full.OFFSHOOT_SOCKET;
    const r = spawnSync(bin, ['-store', store, ...args], { cwd: dir, env: full, encoding: 'utf8' });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const init = cli(['init']);
  assert.equal(init.code, 0, init.stderr);
  const s: SharedStore = {
    kind,
    dir,
    store,
    env,
    file: (name) => path.join(dir, name),
    cli,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
    daemon: (i, flags = [], opts = {}) => {
      const root = path.join(dir, `co${i}`);
      mkdirSync(root, { recursive: true });
      return startDaemon(
        s,
        ['-checkouts', root, '-flush-every', '0', '-reap-every', '0', ...flags],
        { ...env, ...opts.env },
        s.file(`d${i}.sock`),
        opts.launcher,
      );
    },
    remove: async () => {
      await bucket?.remove();
      s.cleanup();
    },
  };
  return s;
}

/** Runs SQL through the stock sqlite3 CLI (a foreign writer), returning its stdout. */
export function sqlite(db: string, script: string): string {
  // A lane's .dump outgrows spawnSync's 1 MiB default buffer within seconds of blob inserts.
  const r = spawnSync('sqlite3', [db], { input: script, encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(r.status, 0, `sqlite3 failed: ${r.stderr}${r.error ? ` (${r.error.message})` : ''}`);
  return r.stdout;
}

/** The `.dump` of a database file. */
export function dumpOf(db: string): string {
  return sqlite(db, '.dump\n');
}

/** Exports a branch's durable head through the CLI and returns its `.dump`. */
export function durableDump(s: SharedStore, target: string): string {
  const out = s.file(`export-${Math.random().toString(16).slice(2)}.db`);
  const r = s.cli(['export', target, out]);
  assert.equal(r.code, 0, r.stderr);
  const d = dumpOf(out);
  rmSync(out, { force: true });
  return d;
}

/** One request allowed to take long (a GC pass over a bucket on a loaded machine), on a fresh connection. */
export async function slowRequest(d: DaemonProcess, req: Record<string, unknown>, ms = 120_000): Promise<Response> {
  const c = await LineClient.connect(d.sock);
  try {
    c.send(`${JSON.stringify(req)}\n`);
    return await c.next(ms);
  } finally {
    c.close();
  }
}

/**
 * How to run a daemon that the others cannot tell apart from one on another machine: in its own pid namespace
 * (`unshare --pid --fork`, as root where the kernel allows it), else under another `OFFSHOOT_HOST`. Either way its
 * lease records a host and pid namespace that are not this test's, so the dead-process shortcut cannot apply to it.
 */
export interface OtherMachine {
  how: 'pid namespace' | 'OFFSHOOT_HOST';
  launcher: string[];
  env: NodeJS.ProcessEnv;
}

/** Probes once for a pid namespace of our own; falls back to a distinct OFFSHOOT_HOST. */
export function otherMachine(): OtherMachine {
  const launcher = ['unshare', '--pid', '--fork', '--kill-child'];
  const probe = spawnSync(launcher[0] ?? '', [...launcher.slice(1), 'true'], { stdio: 'ignore' });
  if (probe.status === 0) return { how: 'pid namespace', launcher, env: {} };
  return { how: 'OFFSHOOT_HOST', launcher: [], env: { OFFSHOOT_HOST: 'another-machine' } };
}

/** SIGKILLs the daemon itself (not its launcher) and waits until it is gone. */
export async function killDaemon(d: DaemonProcess, m: OtherMachine): Promise<void> {
  const pid = d.proc.pid ?? 0;
  // Under unshare the daemon is the launcher's only child; the launcher exits once it is dead.
  const child = m.launcher.length > 0 ? Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()) : pid;
  assert.ok(child > 0, 'the daemon process is known');
  process.kill(child, 'SIGKILL');
  await d.exited;
}
