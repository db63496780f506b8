// Shared by the dashboard suites: Debian's chromium driven by playwright-core, a scripted store history, and a real
// `offshoot ui` process.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { runSql } from '../ops/sqlite-cli.js';
import { type StoreDir, until } from '../daemon/daemon-process.js';

/** Debian's chromium, installed by scripts/browser-env.sh. */
export const CHROMIUM = '/usr/bin/chromium';

// Without the background-networking flags chromium keeps dialling out, and this machine's closed network refuses it.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser suites cannot run here, or undefined; under CI=true a missing browser is a failure, not a skip. */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const why = `${CHROMIUM} is missing: run scripts/browser-env.sh (make test does)`;
  if (process.env.CI === 'true') assert.fail(why);
  return why;
}

/** Launches headless chromium with a fresh profile. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** Where screenshots go when OFFSHOOT_UI_SCREENSHOTS names a directory (docs/ui-*.png are made this way). */
export function screenshotPath(name: string): string | undefined {
  const dir = process.env.OFFSHOOT_UI_SCREENSHOTS;
  return dir === undefined || dir === '' ? undefined : path.join(dir, name);
}

function cli(s: StoreDir, args: string[]): string {
  const r = s.cli(args);
  assert.equal(r.code, 0, `offshoot ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The scripted history's branches, and the edges the tree must draw between them. */
export const HISTORY_NODES = [
  'attempt-a',
  'attempt-a-pre-rollback',
  'attempt-b',
  'attempt-c',
  'main',
  'main-pre-promote',
  'scratch',
];
export const HISTORY_EDGES = [
  'attempt-a->attempt-a-pre-rollback undo @5',
  'attempt-b->main promote @4',
  'main->attempt-a fork @3',
  'main->attempt-b fork @3',
  'main->attempt-c fork @2',
  'main->main-pre-promote undo @3',
  'main->scratch fork @4',
];

/**
 * Create (main at txid 1), checkpoints v1 and v2, three forks (attempt-c at v1), a rollback of attempt-a (undo point
 * attempt-a-pre-rollback), a one-row change on attempt-b promoted onto main (undo point main-pre-promote), a TTL'd
 * fork and a compact of attempt-c.
 */
export function scriptedHistory(s: StoreDir): void {
  const seed = s.file('seed.db');
  runSql(
    seed,
    "create table items(id integer primary key, name text, qty int); insert into items(name, qty) values ('apple', 3), ('pear', 5), ('plum', 7);",
  );
  cli(s, ['create', 'app', '--from', seed]);
  const main = cli(s, ['checkout', 'app']);
  runSql(main, "insert into items(name, qty) values ('fig', 1)");
  cli(s, ['checkpoint', 'app', 'v1', '--meta', 'tests=pass']);
  runSql(main, "update items set qty = 9 where name = 'apple'");
  cli(s, ['checkpoint', 'app', 'v2']);
  cli(s, ['fork', 'app', 'attempt-a']);
  cli(s, ['fork', 'app', 'attempt-b']);
  cli(s, ['fork', 'app', 'attempt-c', '--at', 'v1']);
  const a = cli(s, ['checkout', 'app@attempt-a']);
  runSql(a, "insert into items(name, qty) values ('kiwi', 2)");
  cli(s, ['checkpoint', 'app@attempt-a', 'a1']);
  runSql(a, 'delete from items');
  cli(s, ['checkpoint', 'app@attempt-a', 'a2']);
  cli(s, ['rollback', 'app@attempt-a', '--to', 'a1']);
  const b = cli(s, ['checkout', 'app@attempt-b']);
  runSql(b, "update items set qty = 42 where name = 'pear'");
  cli(s, ['checkpoint', 'app@attempt-b', 'fixed']);
  cli(s, ['promote', 'app@attempt-b', '--onto', 'main', '--force']);
  cli(s, ['fork', 'app', 'scratch', '--ttl', '1h']);
  cli(s, ['compact', 'app@attempt-c']);
}

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

/** A running `offshoot ui`. */
export interface UiProcess {
  /** `http://host:port/` as printed. */
  url: string;
  /** The server's process id. */
  pid: number;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `offshoot ui` on the store and waits until it prints its URL (or exits, then rejects with its stderr). */
export async function startUi(s: StoreDir, flags: string[], env: NodeJS.ProcessEnv = {}): Promise<UiProcess> {
  const childEnv = { ...process.env, ...env };
  delete childEnv.OFFSHOOT_STORE;
  if (env.OFFSHOOT_TOKEN === undefined) delete childEnv.OFFSHOOT_TOKEN;
  // A relative store spec (the process runs in the store's directory) keeps temp paths out of screenshots.
  const store = path.relative(s.dir, s.store);
  const proc = spawn(path.join(repoRoot, 'offshoot'), ['-store', store, 'ui', ...flags], {
    cwd: s.dir,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let out = '';
  let err = '';
  let code: number | null | undefined;
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', (c) => {
      code = c;
      running.delete(proc);
      resolve();
    }),
  );
  await until(() => out.includes('serving on') || code !== undefined, 'offshoot ui to start', 30_000);
  if (code !== undefined) throw new Error(`offshoot ui exited ${code}: ${err}`);
  const url = /serving on (\S+)/.exec(out)?.[1] ?? '';
  return {
    url,
    pid: proc.pid as number,
    stderr: () => err,
    stop: async () => {
      if (code === undefined) proc.kill('SIGTERM');
      await exited;
    },
  };
}
