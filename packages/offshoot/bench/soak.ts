import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { connect, type Client } from '@offshoot/client';
import { makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from '../test/daemon/daemon-process.js';
import { bytes, median, ms, printTable } from './measure.js';

/**
 * The eval loop left running: episodes forked from one checkpoint, written, graded by a diff and left to expire by
 * TTL, for the whole duration, with the daemon's janitor reaping and collecting. It samples the store's bytes, the
 * daemon's RSS and open descriptors, and fails on any error or any diff that is not exactly what the episode wrote.
 *
 *   make soak DURATION=600                     # seconds (default 600); EPISODES=N stops after N episodes instead
 */
const SECONDS = Number(process.env.OFFSHOOT_SOAK_SECONDS ?? 600);
const EPISODES = Number(process.env.OFFSHOOT_SOAK_EPISODES ?? 0);
const LANES = Number(process.env.OFFSHOOT_SOAK_LANES ?? 4);
const TTL = process.env.OFFSHOOT_SOAK_TTL ?? '5s';
/** The janitor's period and GC grace: short, so a soak of minutes goes through many reap and GC cycles. */
const JANITOR = ['-reap-every', '2s', '-gc-grace', '2s'];
const SAMPLE_EVERY_MS = 10_000;

interface Sample {
  at: number;
  episodes: number;
  storeBytes: number;
  storeFiles: number;
  checkoutBytes: number;
  branches: number;
  rssBytes: number;
  fds: number;
}

function usage(dir: string): { files: number; bytes: number } {
  let files = 0;
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return { files, bytes: total };
  }
  for (const name of names) {
    const st = statSync(join(dir, name), { throwIfNoEntry: false });
    if (st?.isFile()) {
      files++;
      total += st.size;
    }
  }
  return { files, bytes: total };
}

function processFigures(pid: number): { rssBytes: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  return { rssBytes: rss, fds: readdirSync(`/proc/${pid}/fd`).length };
}

async function sample(s: StoreDir, d: DaemonProcess, c: Client, episodes: number, t0: number): Promise<Sample> {
  const data = usage(join(s.store, 'data'));
  const refs = usage(join(s.store, 'refs'));
  const checkouts = usage(join(s.store, 'checkouts'));
  const pid = d.proc.pid as number;
  return {
    at: (performance.now() - t0) / 1000,
    episodes,
    storeBytes: data.bytes + refs.bytes,
    storeFiles: data.files + refs.files,
    checkoutBytes: checkouts.bytes,
    branches: (await c.branches('soak')).length,
    ...processFigures(pid),
  };
}

function seed(s: StoreDir): void {
  const path = s.file('seed.db');
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB)');
  const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(1000))');
  db.exec('BEGIN');
  for (let i = 0; i < 4000; i++) ins.run(`seed-${i}`);
  db.exec('COMMIT');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  for (const args of [
    ['create', 'soak', '--from', path],
    ['checkout', 'soak'],
    ['checkpoint', 'soak', 'seeded'],
  ]) {
    const r = s.cli(args);
    if (r.code !== 0) throw new Error(`offshoot ${args.join(' ')}: ${r.stderr}`);
  }
}

/** One episode: fork with a TTL, open, write ten rows, close, and check the diff is exactly those rows. */
async function episode(c: Client, name: string): Promise<number> {
  const t0 = performance.now();
  await c.fork('soak', 'main', name, { from: 'seeded', ttl: TTL });
  const session = await c.open('soak', name);
  const db = openDatabase(session.path);
  try {
    db.pragma('busy_timeout = 5000');
    const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, ?)');
    db.exec('BEGIN');
    for (let i = 0; i < 10; i++) ins.run(`${name}-${i}`, Buffer.from(name));
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  await session.close();
  const d = await c.diff('soak@main@seeded', `soak@${name}`);
  const items = d.tables.find((t) => t.table === 'items');
  const keys = (items?.added ?? []).map((r) => r.k).sort();
  const want = Array.from({ length: 10 }, (_, i) => `${name}-${i}`).sort();
  const other = d.tables.filter((t) => t.table !== 'items' && t.status !== 'same');
  if (JSON.stringify(keys) !== JSON.stringify(want) || items?.removed.length || items?.changed.length || other.length)
    throw new Error(
      `divergence in ${name}: the diff is not the ten rows the episode wrote: ${JSON.stringify(d.tables)}`,
    );
  return performance.now() - t0;
}

/** Runs the soak and prints its samples; exits non-zero on an error, a divergence, or growth past the bounds. */
export async function soak(): Promise<void> {
  const s = makeStoreDir();
  seed(s);
  const d = await startDaemon(s, JANITOR, {}, s.file('d.sock'));
  const clients: Client[] = [];
  const samples: Sample[] = [];
  const times: number[] = [];
  let episodes = 0;
  let failure: Error | undefined;
  try {
    for (let i = 0; i < LANES + 1; i++) clients.push(await connect(d.sock));
    const probe = clients[LANES] as Client;
    const t0 = performance.now();
    const deadline = t0 + SECONDS * 1000;
    const more = (): boolean =>
      failure === undefined && (EPISODES > 0 ? episodes < EPISODES : performance.now() < deadline);
    samples.push(await sample(s, d, probe, 0, t0));
    const sampler = setInterval(() => {
      void sample(s, d, probe, episodes, t0).then((x) => {
        samples.push(x);
        progress(x);
      });
    }, SAMPLE_EVERY_MS);
    await Promise.all(
      clients.slice(0, LANES).map(async (c, lane) => {
        for (let n = 0; more(); n++) {
          try {
            times.push(await episode(c, `ep-${lane}-${n}`));
            episodes++;
          } catch (err) {
            failure ??= err as Error;
          }
        }
      }),
    );
    clearInterval(sampler);
    const atEnd = await sample(s, d, probe, episodes, t0);
    samples.push(atEnd);
    // Let every episode expire and the janitor reap it and collect its objects (TTL, then GC grace, twice over).
    const settleBy = performance.now() + 60_000;
    while (performance.now() < settleBy && (await probe.branches('soak')).length > 1)
      await new Promise((r) => setTimeout(r, 1000));
    await new Promise((r) => setTimeout(r, 8000));
    const settled = await sample(s, d, probe, episodes, t0);
    samples.push(settled);
    report(samples, times, episodes);
    const first = samples[0] as Sample;
    const warm = samples[Math.min(2, samples.length - 1)] as Sample;
    const problems: string[] = [];
    if (settled.branches !== 1) problems.push(`${settled.branches - 1} episodes were never reaped`);
    if (settled.storeBytes > 2 * first.storeBytes + (1 << 20))
      problems.push(`the store grew from ${bytes(first.storeBytes)} to ${bytes(settled.storeBytes)} after GC`);
    if (settled.fds > warm.fds + 16) problems.push(`open descriptors grew from ${warm.fds} to ${settled.fds}`);
    if (settled.rssBytes > 2 * warm.rssBytes)
      problems.push(`RSS grew from ${bytes(warm.rssBytes)} to ${bytes(settled.rssBytes)}`);
    if (failure) problems.push(`error: ${failure.message}`);
    if (problems.length > 0) {
      console.error(`soak FAILED after ${episodes} episodes: ${problems.join('; ')}`);
      process.exitCode = 1;
    } else console.log(`soak passed: ${episodes} episodes, no error, no divergence; store, RSS and descriptors flat`);
  } finally {
    for (const c of clients) await c.close();
    await d.stop();
    s.cleanup();
  }
}

/** One line on stderr per sample: episodes so far, their rate and, when a count was asked for, the time left. */
function progress(x: Sample): void {
  const rate = x.episodes / x.at;
  const eta = EPISODES > 0 && rate > 0 ? `, about ${((EPISODES - x.episodes) / rate).toFixed(0)} s left` : '';
  process.stderr.write(
    `soak: ${x.at.toFixed(0)} s, ${x.episodes} episodes (${rate.toFixed(1)}/s${eta}), ${x.branches} branches, daemon RSS ${bytes(x.rssBytes)}, ${x.fds} fds\n`,
  );
}

function report(samples: Sample[], times: number[], episodes: number): void {
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const rows = samples.map((x) => [
    `${x.at.toFixed(0)} s`,
    String(x.episodes),
    String(x.branches),
    `${bytes(x.storeBytes)} (${x.storeFiles} files)`,
    bytes(x.checkoutBytes),
    bytes(x.rssBytes),
    String(x.fds),
  ]);
  printTable(
    `soak: ${episodes} episodes in ${LANES} lanes (fork --ttl ${TTL}, open, write 10 rows, close, diff; left to expire), janitor ${JANITOR.join(' ')}; episode p50 ${ms(median(times))}; load ${load}`,
    ['time', 'episodes', 'branches', 'store (data + refs)', 'checkouts', 'daemon RSS', 'open fds'],
    rows,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await soak();
