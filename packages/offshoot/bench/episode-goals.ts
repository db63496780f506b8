// The eval episode's goals (issue 34), each beside the baseline it is read against, measured in the same run: an
// ephemeral episode (client.episode: an ephemeral fork of the seed's checkpoint with a live session, ten rows
// written, closed, diffed against the seed, discarded) at 10 MiB and 1 GiB on the temp dir's filesystem and on XFS
// with reflink, against `cp` of the seed and the 10 MiB episode; a small document store's episode against a
// JSON reload of the same documents; episodes from 8 concurrent clients on one daemon; the durable episode; a fork
// alone; and the CLI at rest (`fork --at`, the checkout of a fresh fork) against `node -e 0` and `cp`.
// Sizes: OFFSHOOT_BENCH_GOALS_MIB (default 10,1024); throughput seconds: OFFSHOOT_BENCH_GOALS_SECONDS (default 60).
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { type Client, connect } from '@offshoot/client';
import { type DaemonProcess, makeStoreDir, type StoreDir, startDaemon } from '../test/daemon/daemon-process.js';
import { mountReflinkXfs, type ReflinkMount, reflinkMountMissing } from '../test/support/xfs-reflink.js';
import { buildBlobSeed, buildJsonSeed, timeCommand, writeRows } from './episode-bench.js';
import { median, ms, percentile, printTable } from './measure.js';

const MiB = 1 << 20;
const [SMALL_MIB = 10, LARGE_MIB = 1024] = (process.env.OFFSHOOT_BENCH_GOALS_MIB ?? '10,1024').split(',').map(Number);
const SECONDS = Number(process.env.OFFSHOOT_BENCH_GOALS_SECONDS ?? 60);
const CLIENTS = 8;
const CLI = new URL('../bin/offshoot.cjs', import.meta.url).pathname;

/** A seeded database in a store on one filesystem, with a daemon serving it. */
interface Seeded {
  s: StoreDir;
  db: string;
  table: string;
  seed: string;
  daemon: DaemonProcess;
  client: Client;
}

/** What one row of the goals table says. */
type Row = [measure: string, figure: string, baseline: string, ratio: string, goal: string, met: string];

function cli(s: StoreDir, args: string[]): void {
  execFileSync(process.execPath, [CLI, '-store', s.store, ...args], { cwd: s.dir, stdio: 'ignore' });
}

async function seeded(dir: string, db: string, table: string, build: (seed: string) => void): Promise<Seeded> {
  const s = makeStoreDir(dir);
  const seed = s.file(`${db}.db`);
  build(seed);
  cli(s, ['create', db, '--from', seed]);
  cli(s, ['checkout', db]);
  cli(s, ['checkpoint', db, 'seeded']);
  const daemon = await startDaemon(s, [], {}, s.file(`${db}.sock`));
  return { s, db, table, seed, daemon, client: await connect(daemon.sock) };
}

async function release(x: Seeded): Promise<void> {
  await x.client.close();
  await x.daemon.stop();
}

/** One episode, ephemeral unless told otherwise; its wall time in ms. */
async function episode(c: Client, x: Seeded, ephemeral = true): Promise<number> {
  const t0 = performance.now();
  const ep = await c.episode(x.db, { fromCheckpoint: 'seeded', ephemeral });
  writeRows(ep.path, x.table);
  const r = await ep.close();
  const t = performance.now() - t0;
  const added = r.diff.tables.reduce((a, tb) => a + (tb.right_count ?? 0) - (tb.left_count ?? 0), 0);
  if (added !== 10 && r.diff.tables.every((tb) => tb.right_count !== undefined))
    throw new Error(`episode on ${x.db}: the diff shows ${added} rows added, not 10`);
  return t;
}

async function episodes(x: Seeded, n: number, ephemeral = true): Promise<number[]> {
  for (let i = 0; i < 3; i++) await episode(x.client, x, ephemeral);
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await episode(x.client, x, ephemeral));
  return xs;
}

/** Episodes completed per second by CLIENTS connections looping for SECONDS. */
async function throughput(x: Seeded): Promise<number> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(x.daemon.sock)));
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < end) {
        await episode(c, x);
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - t0) / 1000);
  await Promise.all(clients.map((c) => c.close()));
  return rate;
}

const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
const met = (ok: boolean): string => (ok ? 'yes' : 'no');

/** Runs every goal's measure and prints the goals table. */
export async function episodeGoalsBench(): Promise<void> {
  const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const rows: Row[] = [];
  const missing = reflinkMountMissing();
  let mount: ReflinkMount | undefined;
  if (missing === undefined) mount = mountReflinkXfs(Math.max(4096, 3 * LARGE_MIB + 2048));
  else console.log(`\n(episode goals: no reflink filesystem: ${missing})`);
  try {
    const small = Math.ceil((SMALL_MIB * MiB) / 3200);
    const large = Math.ceil((LARGE_MIB * MiB) / 3200);
    // ext4 (the temp dir): the small and large seeds, the durable episode, a fork alone, the JSON documents, the CLI.
    const e10 = await seeded(tmpdir(), 'items10', 'items', (p) => buildBlobSeed(p, SMALL_MIB, small));
    const e10eph = await episodes(e10, 200);
    const e10dur = await episodes(e10, 100, false);
    const forks: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now();
      await e10.client.fork(e10.db, 'main', `fork-${i}`, { from: 'seeded', ttl: '1h' });
      forks.push(performance.now() - t0);
    }
    for (let i = 0; i < 100; i++) await e10.client.destroy(e10.db, `fork-${i}`);
    await release(e10);
    const node0 = timeCommand(10, () => execFileSync(process.execPath, ['-e', '0']));
    const forkAt = timeCommand(10, (i) => cli(e10.s, ['fork', e10.db, `at-rest-${i}`, '--at', 'seeded']));
    e10.s.cleanup();
    rows.push(
      [
        `ephemeral episode, ${SMALL_MIB} MiB, p50 / p99, ext4`,
        `${ms(percentile(e10eph, 50))} / ${ms(percentile(e10eph, 99))}`,
        '',
        '',
        '≤ 8 / 20 ms',
        met(percentile(e10eph, 50) <= 8 && percentile(e10eph, 99) <= 20),
      ],
      [
        `durable episode, ${SMALL_MIB} MiB, p50, ext4`,
        ms(percentile(e10dur, 50)),
        '',
        '',
        '≤ 15 ms',
        met(percentile(e10dur, 50) <= 15),
      ],
      [
        'fork alone through the daemon, p50',
        ms(percentile(forks, 50)),
        '',
        '',
        '≤ 2 ms',
        met(percentile(forks, 50) <= 2),
      ],
    );

    const e1g = await seeded(tmpdir(), 'items1g', 'items', (p) => buildBlobSeed(p, LARGE_MIB, large));
    const cpLarge = timeCommand(
      3,
      () => execFileSync('cp', [e1g.seed, e1g.s.file('copy.db')]),
      () => rmSync(e1g.s.file('copy.db')),
    );
    const e1gEph = median(await episodes(e1g, 5));
    await release(e1g);
    const forkAtLarge = timeCommand(5, (i) => cli(e1g.s, ['fork', e1g.db, `at-rest-${i}`, '--at', 'seeded']));
    const checkoutLarge = timeCommand(3, (i) => cli(e1g.s, ['checkout', `${e1g.db}@at-rest-${i}`]));
    e1g.s.cleanup();
    rows.push(
      [
        `ephemeral episode, ${LARGE_MIB} MiB, ext4`,
        ms(e1gEph),
        `cp ${ms(cpLarge)}`,
        ratio(e1gEph, cpLarge),
        '≤ 1.3× cp',
        met(e1gEph / cpLarge <= 1.3),
      ],
      [
        `CLI fork --at at rest, ${SMALL_MIB} MiB`,
        ms(forkAt),
        `node -e 0 ${ms(node0)}`,
        ratio(forkAt, node0),
        '≤ 1.2×',
        met(forkAt / node0 <= 1.2),
      ],
      [
        `CLI fork --at at rest, ${LARGE_MIB} MiB`,
        ms(forkAtLarge),
        `node -e 0 ${ms(node0)}`,
        ratio(forkAtLarge, node0),
        '≤ 1.2×',
        met(forkAtLarge / node0 <= 1.2),
      ],
      [
        `CLI checkout of a fresh fork at rest, ${LARGE_MIB} MiB, ext4`,
        ms(checkoutLarge),
        `cp ${ms(cpLarge)}`,
        ratio(checkoutLarge, cpLarge),
        '≤ 1.5× cp',
        met(checkoutLarge / cpLarge <= 1.5),
      ],
    );

    let json = '';
    const docs = await seeded(tmpdir(), 'retail', 'orders', (p) => {
      json = `${p}.json`;
      buildJsonSeed(p, json);
    });
    const reload = timeCommand(20, () => JSON.parse(readFileSync(json, 'utf8')));
    const docsEph = median(await episodes(docs, 100));
    const jsonMib = statSync(json).size / MiB;
    await release(docs);
    docs.s.cleanup();
    rows.push([
      `documents episode (${jsonMib.toFixed(1)} MiB of JSON), ext4`,
      ms(docsEph),
      `JSON reload ${ms(reload)}`,
      ratio(docsEph, reload),
      '≤ 0.2×',
      met(docsEph / reload <= 0.2),
    ]);

    if (mount !== undefined) {
      const x10 = await seeded(mount.dir, 'items10', 'items', (p) => buildBlobSeed(p, SMALL_MIB, small));
      const x10eph = median(await episodes(x10, 200));
      const rate = await throughput(x10);
      await release(x10);
      x10.s.cleanup();
      const x1g = await seeded(mount.dir, 'items1g', 'items', (p) => buildBlobSeed(p, LARGE_MIB, large));
      const x1gEph = median(await episodes(x1g, 50));
      await release(x1g);
      x1g.s.cleanup();
      rows.push(
        [`ephemeral episode, ${SMALL_MIB} MiB, p50, XFS reflink`, ms(x10eph), '', '', '≤ 4 ms', met(x10eph <= 4)],
        [
          `ephemeral episode, ${LARGE_MIB} MiB vs ${SMALL_MIB} MiB, XFS`,
          ms(x1gEph),
          `${SMALL_MIB} MiB ${ms(x10eph)}`,
          ratio(x1gEph, x10eph),
          '≤ 1.2×',
          met(x1gEph / x10eph <= 1.2),
        ],
        [
          `throughput, ${SMALL_MIB} MiB, ${CLIENTS} clients, one daemon, XFS, ${SECONDS} s`,
          `${rate.toFixed(0)} episodes/s`,
          '',
          '',
          '≥ 500/s',
          met(rate >= 500),
        ],
      );
    }
  } finally {
    mount?.unmount();
  }
  const load1 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  printTable(
    `eval episode goals (medians unless said; load average ${load0} before, ${load1} after)`,
    ['measure', 'figure', 'baseline', 'ratio', 'goal', 'met'],
    rows,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await episodeGoalsBench();
