import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { makeStoreDir, type StoreDir } from '../test/daemon/daemon-process.js';
import { runSql } from '../test/ops/sqlite-cli.js';
import { bytes, printTable } from './measure.js';
import { DRIVERS, type Driver } from './server-drivers.js';

/**
 * Each long-lived server left running under a mix of requests it answers and requests it refuses (the daemon, `offshoot
 * mcp` on stdio and over HTTP in both protocol eras, `offshoot ui`), one after another, each for the same time. It
 * samples the server's RSS and open descriptors and fails when either grows past the bounds once warm, or when any
 * answer is not the expected one.
 *
 *   make soak                                            # the episode soak, then this (SERVER_SECONDS each, default 120)
 *   OFFSHOOT_SOAK_SERVER_SECONDS=60 node --import tsx packages/offshoot/bench/server-soak.ts [name-substring…]
 */
const SECONDS = Number(process.env.OFFSHOOT_SOAK_SERVER_SECONDS ?? 120);
const SAMPLE_EVERY_MS = 5_000;
/** Growth allowed between the warm sample (a quarter of the way in) and the end: V8 settles its heap in that time. */
const RSS_SLACK = 1.25;
const RSS_SLACK_BYTES = 16 << 20;
const FD_SLACK = 8;

interface Sample {
  at: number;
  rss: number;
  fds: number;
}

interface Soaked {
  name: string;
  mix: string;
  cycles: number;
  good: number;
  refused: number;
  seconds: number;
  samples: Sample[];
  problems: string[];
}

function figures(pid: number, at: number): Sample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  return { at, rss, fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** The median of the samples' values around index i (three of them where there are). */
function around(samples: readonly Sample[], i: number, pick: (s: Sample) => number): number {
  const xs = samples
    .slice(Math.max(0, i - 1), i + 2)
    .map(pick)
    .sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)] ?? 0;
}

async function soakOne(driver: Driver): Promise<Soaked> {
  const s: StoreDir = makeStoreDir();
  const seed = s.file('seed.db');
  runSql(seed, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a'),('b'),('c');");
  if (s.cli(['create', 'app', '--from', seed]).code !== 0) throw new Error('soak: create app failed');
  // A destroyed branch's log stays for the history window (7 days by default): with a window of a second the janitor
  // collects the logs of the forks the cycles destroy, so the store stays its size and the server's does too.
  if (s.cli(['config', 'history_window=1s']).code !== 0) throw new Error('soak: config history_window failed');
  const server = await driver.start(s);
  const out: Soaked = {
    name: driver.name,
    mix: driver.mix,
    cycles: 0,
    good: 0,
    refused: 0,
    seconds: 0,
    samples: [],
    problems: [],
  };
  const t0 = performance.now();
  const seconds = (): number => (performance.now() - t0) / 1000;
  out.samples.push(figures(server.pid, 0));
  const sampler = setInterval(() => {
    const x = figures(server.pid, seconds());
    out.samples.push(x);
    process.stderr.write(`  ${x.at.toFixed(0)} s: ${out.cycles} cycles, RSS ${bytes(x.rss)}, ${x.fds} fds\n`);
  }, SAMPLE_EVERY_MS);
  try {
    while (seconds() < SECONDS) {
      const n = await server.cycle(out.cycles);
      out.cycles++;
      out.good += n.good;
      out.refused += n.refused;
    }
  } catch (err) {
    out.problems.push(`cycle ${out.cycles}: ${(err as Error).message}`);
  } finally {
    clearInterval(sampler);
    out.seconds = seconds();
    out.samples.push(figures(server.pid, out.seconds));
    await server.stop();
    s.cleanup();
  }
  const last = out.samples.length - 1;
  const warm = Math.max(1, Math.floor(last / 4));
  const [rssWarm, rssEnd] = [around(out.samples, warm, (x) => x.rss), around(out.samples, last, (x) => x.rss)];
  const [fdWarm, fdEnd] = [around(out.samples, warm, (x) => x.fds), around(out.samples, last, (x) => x.fds)];
  if (rssEnd > rssWarm * RSS_SLACK + RSS_SLACK_BYTES)
    out.problems.push(`RSS grew from ${bytes(rssWarm)} to ${bytes(rssEnd)}`);
  if (fdEnd > fdWarm + FD_SLACK) out.problems.push(`open descriptors grew from ${fdWarm} to ${fdEnd}`);
  return out;
}

/** Runs the server soak (every driver, or those whose name contains one of `only`); exits non-zero on a problem. */
export async function serverSoak(only: readonly string[] = []): Promise<void> {
  const drivers = only.length === 0 ? DRIVERS : DRIVERS.filter((d) => only.some((o) => d.name.includes(o)));
  const results: Soaked[] = [];
  for (const d of drivers) {
    process.stderr.write(`server soak: ${d.name}, ${SECONDS} s\n`);
    results.push(await soakOne(d));
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  printTable(
    `server soak: ${SECONDS} s per server of good and refused requests, one cycle after another; load at the end ${load}`,
    ['server', 'cycles', 'requests (good / refused)', 'RSS start → warm → end', 'fds start → warm → end'],
    results.map((r) => {
      const last = r.samples.length - 1;
      const warm = Math.max(1, Math.floor(last / 4));
      const at = (i: number) => r.samples[Math.min(i, last)] as Sample;
      return [
        r.name,
        String(r.cycles),
        `${r.good} / ${r.refused} (${((r.good + r.refused) / r.seconds).toFixed(0)}/s)`,
        `${bytes(at(0).rss)} → ${bytes(at(warm).rss)} → ${bytes(at(last).rss)}`,
        `${at(0).fds} → ${at(warm).fds} → ${at(last).fds}`,
      ];
    }),
  );
  for (const r of results) console.log(`${r.name}: ${r.mix}`);
  const failed = results.filter((r) => r.problems.length > 0);
  for (const r of failed) console.error(`server soak FAILED: ${r.name}: ${r.problems.join('; ')}`);
  if (failed.length > 0) process.exitCode = 1;
  else console.log('server soak passed: every answer as expected; RSS and descriptors flat once warm');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await serverSoak(process.argv.slice(2));
