import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { connect, type Client } from '@offshoot/client';
import { makeStoreDir, startDaemon, until, type StoreDir } from '../test/daemon/daemon-process.js';
import { bytes, median, ms, printTable, timeMedian } from './measure.js';

const MiB = 1 << 20;
/** Single-insert transactions per writer run. */
const WRITER_TXNS = Number(process.env.OFFSHOOT_BENCH_WRITER_TXNS ?? 5000);
/** Back-to-back pairs (plain, live) per run; the run's ratio is their median. */
const WRITER_PAIRS = Number(process.env.OFFSHOOT_BENCH_WRITER_PAIRS ?? 15);
/** Untimed transactions on each file first, so that neither side pays the daemon's first-use compilation. */
const WRITER_WARMUP_TXNS = 500;
/** Issue 12's goal: the writer under a live session at this fraction of a plain WAL file, in every run. */
const WRITER_GOAL = 0.95;
const FLUSH_RUNS = 5;
const OPEN_RUNS = 3;
/** Rows of this many bytes fill a 4 KiB page each, so changing k rows changes k pages. */
const PAGE_ROW_BYTES = 3500;
/** Pages of the flush database: large enough that 10,000 changed pages stay a segment (under half the file). */
const FLUSH_DB_PAGES = 24_000;
const FLUSH_PAGES = [1, 100, 10_000];
const OPEN_SIZES_MIB = (process.env.OFFSHOOT_BENCH_OPEN_SIZES ?? '64,512').split(',').map(Number);

function sqlite3(db: string, script: string): void {
  const r = spawnSync('sqlite3', ['-bail', db], { input: script, encoding: 'utf8', maxBuffer: 64 * MiB });
  if (r.status !== 0) throw new Error(`sqlite3 ${db} failed (exit ${String(r.status)}): ${r.stderr}`);
}

/** Transactions per second of one stock sqlite3 process running n single-row insert transactions. */
function writerRate(db: string, n: number): number {
  const script = `.timeout 5000\n${'INSERT INTO w(v) VALUES (randomblob(100));\n'.repeat(n)}`;
  const t0 = performance.now();
  sqlite3(db, script);
  return n / ((performance.now() - t0) / 1000);
}

/** A database file of `pages` rows that fill one 4 KiB page each. */
function buildPageRows(path: string, pages: number): void {
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE p(id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  const ins = db.prepare(`INSERT INTO p(body) VALUES (randomblob(${PAGE_ROW_BYTES}))`);
  db.exec('BEGIN');
  for (let i = 0; i < pages; i++) ins.run();
  db.exec('COMMIT');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function captureCaughtUp(client: Client, db: string): Promise<void> {
  await until(
    async () => (await client.status()).find((s) => s.db === db)?.capture_lag_bytes === 0,
    `capture of ${db} to catch up`,
    120_000,
  );
}

/** Writer throughput on a plain WAL file and on a checkout under a live session, runs interleaved. */
async function writerThroughput(s: StoreDir, client: Client): Promise<string[][]> {
  const plain = s.file('plain.db');
  sqlite3(plain, 'PRAGMA journal_mode = WAL; CREATE TABLE w(id INTEGER PRIMARY KEY, v BLOB);');
  const created = s.cli(['create', 'writer']);
  if (created.code !== 0) throw new Error(created.stderr);
  const session = await client.open('writer');
  sqlite3(session.path, 'CREATE TABLE w(id INTEGER PRIMARY KEY, v BLOB);');
  await session.flush();
  const plainRates: number[] = [];
  const liveRates: number[] = [];
  const ratios: number[] = [];
  writerRate(plain, WRITER_WARMUP_TXNS);
  writerRate(session.path, WRITER_WARMUP_TXNS);
  // Back-to-back pairs, in alternating order: on a shared machine the ratio within a pair is steadier than either rate.
  for (let i = 0; i < WRITER_PAIRS; i++) {
    const first = i % 2 === 0 ? plain : session.path;
    const second = first === plain ? session.path : plain;
    const a = writerRate(first, WRITER_TXNS);
    const b = writerRate(second, WRITER_TXNS);
    const [p, l] = first === plain ? [a, b] : [b, a];
    plainRates.push(p);
    liveRates.push(l);
    ratios.push(l / p);
  }
  await session.close();
  const rate = (x: number): string => `${x.toFixed(0)} tx/s`;
  const what = `sqlite3 writer, ${WRITER_TXNS} single-insert transactions`;
  const ratio = median(ratios);
  const verdict = ratio >= WRITER_GOAL ? 'goal met' : 'goal NOT met';
  console.log(`writer pairs (live/plain, in run order): ${ratios.map((r) => r.toFixed(2)).join(' ')}`);
  console.log(
    `writer under capture: ${ratio.toFixed(2)}× plain, median of ${WRITER_PAIRS} pairs (min ${Math.min(...ratios).toFixed(2)}); ` +
      `goal ≥ ${WRITER_GOAL}× in every run: ${verdict} in this one`,
  );
  return [
    [what, 'plain WAL file', rate(median(plainRates)), ''],
    [
      what,
      'checkout under a live session',
      rate(median(liveRates)),
      `${ratio.toFixed(2)}× plain, median of ${WRITER_PAIRS} pairs (goal ≥ ${WRITER_GOAL}×: ${verdict})`,
    ],
  ];
}

/** Flush latency (client round trip) for k changed pages, measured once capture has caught up with the writes. */
async function flushLatency(s: StoreDir, client: Client): Promise<string[][]> {
  const src = s.file('flush-src.db');
  buildPageRows(src, FLUSH_DB_PAGES);
  const created = s.cli(['create', 'flush', '--from', src]);
  if (created.code !== 0) throw new Error(created.stderr);
  const session = await client.open('flush');
  const rows: string[][] = [];
  for (const k of FLUSH_PAGES) {
    const t = await timeMedian(
      FLUSH_RUNS,
      () => session.flush(),
      async () => {
        sqlite3(session.path, `UPDATE p SET body = randomblob(${PAGE_ROW_BYTES}) WHERE id <= ${k};`);
        await captureCaughtUp(client, 'flush');
      },
    );
    rows.push([
      `flush of ${k.toLocaleString('en-US')} changed page${k === 1 ? '' : 's'}`,
      `${bytes(FLUSH_DB_PAGES * 4096)} checkout`,
      ms(t),
      'segment; capture caught up first',
    ]);
  }
  await session.close();
  return rows;
}

/** Session open on a checkout that was opened and closed once before, so it is provably clean. */
async function openTime(s: StoreDir, client: Client, sizeMiB: number): Promise<string[]> {
  const db = `open${sizeMiB}`;
  const src = s.file(`${db}.db`);
  buildPageRows(src, Math.ceil((sizeMiB * MiB) / 4096));
  const created = s.cli(['create', db, '--from', src]);
  if (created.code !== 0) throw new Error(created.stderr);
  await (await client.open(db)).close();
  const times: number[] = [];
  for (let i = 0; i < OPEN_RUNS; i++) {
    const t0 = performance.now();
    const session = await client.open(db);
    times.push(performance.now() - t0);
    await session.close();
  }
  return [`session open, clean checkout`, bytes(sizeMiB * MiB), ms(median(times)), `median of ${OPEN_RUNS}`];
}

/** Benchmarks a live daemon: writer throughput under capture, flush latency, and session open on a clean checkout. */
export async function daemonBench(): Promise<void> {
  const s = makeStoreDir();
  const d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0', '-snapshot-every', '64']);
  const client = await connect(d.sock);
  try {
    const rows: string[][] = [];
    rows.push(...(await writerThroughput(s, client)));
    rows.push(...(await flushLatency(s, client)));
    for (const size of OPEN_SIZES_MIB) rows.push(await openTime(s, client, size));
    printTable('daemon (local store, medians)', ['measure', 'on', 'median', 'note'], rows);
  } finally {
    client.close();
    await d.stop();
    s.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await daemonBench();
