// The one-screen table of docs/benchmarks.md: what a fork, a checkpoint, a checkout, a diff and an eval episode cost
// at three database sizes, beside what a user would otherwise reach for (`cp`, `VACUUM INTO`, a JSON reload,
// LangGraph's stock SqliteSaver). Writes docs/bench-summary.json, draws docs/bench-summary.svg from it and rewrites
// the table in docs/benchmarks.md. Sizes in MiB: OFFSHOOT_BENCH_SUMMARY_SIZES (default 10,100,1024); samples per
// measure: OFFSHOOT_BENCH_SUMMARY_RUNS (default 20) up to 100 MiB, OFFSHOOT_BENCH_SUMMARY_RUNS_LARGE (5) above.
// With --draw it only redraws the chart and the table from the committed data file.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { connect, type Client } from '@offshoot/client';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { makeStoreDir, startDaemon, type StoreDir } from '../test/daemon/daemon-process.js';
import { buildBlobSeed, episode, type Steps, writeRows } from './episode-bench.js';
import { median, ms, printTable } from './measure.js';
import {
  renderBlock,
  renderSvg,
  replaceBlock,
  SUMMARY_FILES,
  SUMMARY_ROWS,
  type SummaryData,
} from './summary-render.js';

const MiB = 1 << 20;
const SIZES_MIB = (process.env.OFFSHOOT_BENCH_SUMMARY_SIZES ?? '10,100,1024').split(',').map(Number);
const RUNS_SMALL = Number(process.env.OFFSHOOT_BENCH_SUMMARY_RUNS ?? 20);
const RUNS_LARGE = Number(process.env.OFFSHOOT_BENCH_SUMMARY_RUNS_LARGE ?? 5);
/** V8's longest string (2^29 − 24 UTF-16 units on 64-bit): a JSON text past it cannot be parsed or written in Node. */
const V8_MAX_STRING = 2 ** 29 - 24;
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The figures of one size, medians in ms. */
type Figures = Record<string, number | null>;

function load1(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

/** n samples of fn after an untimed `setup` (and a `sync`, so earlier writeback does not land in the sample). */
async function sample(
  n: number,
  fn: (i: number) => unknown,
  setup?: (i: number) => unknown,
  after?: (i: number) => unknown,
): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    await setup?.(i);
    execFileSync('sync');
    const t0 = performance.now();
    await fn(i);
    xs.push(performance.now() - t0);
    await after?.(i);
  }
  return median(xs);
}

/** The seed's rows as JSON records (the blob as base64), as a JSON store or a graph state would hold them. */
function* jsonRecords(seed: string): Generator<{ id: number; k: string; body: string }> {
  const db = openDatabase(seed, { readonly: true });
  try {
    for (const r of db.prepare('SELECT id, k, body FROM items').iterate() as Iterable<{
      id: number;
      k: string;
      body: Buffer;
    }>)
      yield { id: r.id, k: r.k, body: r.body.toString('base64') };
  } finally {
    db.close();
  }
}

/** The JSON text of the seed's rows would fit in one V8 string (each row's text is ~4.05 KB). */
function jsonFits(seed: string): boolean {
  const db = openDatabase(seed, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n * 4100 < V8_MAX_STRING;
  } finally {
    db.close();
  }
}

/** `cp`, `VACUUM INTO`, a JSON reload of the same rows, LangGraph's stock SqliteSaver writing and reading them. */
async function baselines(s: StoreDir, seed: string, n: number): Promise<Figures> {
  const dst = s.file('baseline.db');
  const drop = (): void => rmSync(dst, { force: true });
  const f: Figures = {};
  f.cp = await sample(n, () => execFileSync('cp', [seed, dst]), undefined, drop);
  f.vacuum = await sample(
    n,
    () => {
      const d = openDatabase(seed, { readonly: true });
      d.exec(`VACUUM INTO '${dst}'`);
      d.close();
    },
    undefined,
    drop,
  );
  if (!jsonFits(seed)) {
    for (const k of ['json', 'saverPut', 'saverGet']) f[k] = null;
    return f;
  }
  const jsonPath = s.file('rows.json');
  const fd = openSync(jsonPath, 'w');
  let first = true;
  writeSync(fd, '[');
  for (const r of jsonRecords(seed)) {
    writeSync(fd, (first ? '' : ',') + JSON.stringify(r));
    first = false;
  }
  writeSync(fd, ']');
  closeSync(fd);
  f.json = await sample(n, () => JSON.parse(readFileSync(jsonPath, 'utf8')));
  rmSync(jsonPath);

  const saverPath = s.file('saver.db');
  const saver = SqliteSaver.fromConnString(saverPath);
  const items = [...jsonRecords(seed)];
  const config = (i: number) => ({ configurable: { thread_id: `t-${i}`, checkpoint_ns: '' } });
  f.saverPut = await sample(n, (i) => {
    const cp = emptyCheckpoint();
    cp.channel_values = { items };
    cp.channel_versions = { items: 1 };
    return saver.put(config(i), cp, { source: 'loop', step: i, parents: {} });
  });
  f.saverGet = await sample(
    n,
    async (i) => {
      const t = await saver.getTuple(config(i));
      if ((t?.checkpoint.channel_values.items as unknown[] | undefined)?.length !== items.length)
        throw new Error('SqliteSaver read back a different state');
    },
    undefined,
    (i) => saver.deleteThread(`t-${i}`),
  );
  saver.db.close();
  rmSync(saverPath, { force: true });
  for (const ext of ['-wal', '-shm']) rmSync(saverPath + ext, { force: true });
  return f;
}

/**
 * Forks of the seed's checkpoint, timed in a row; then, fork by fork, its checkout, a one-row checkpoint in a session
 * and the diff of its ten rows; then whole episodes. Forks are destroyed only once all are measured: a destroy frees a
 * copied checkout's blocks in the background, which would land in the next fork's fsyncs.
 */
async function offshoot(c: Client, db: string, n: number): Promise<Figures> {
  const seed = `${db}@main@seeded`;
  const forks: number[] = [];
  const checkouts: number[] = [];
  const checkpoints: number[] = [];
  const diffs: number[] = [];
  const lap = async (into: number[], fn: () => Promise<unknown>): Promise<void> => {
    execFileSync('sync');
    const t0 = performance.now();
    await fn();
    into.push(performance.now() - t0);
  };
  // One untimed fork first: its checkout fills the daemon's cache of the chain, which every later checkout copies.
  const names = ['f-warm', ...Array.from({ length: n }, (_, i) => `f-${i}`)];
  const timed = <T>(name: string, into: T[]): T[] => (name === 'f-warm' ? [] : into);
  for (const name of names)
    await lap(timed(name, forks), () => c.fork(db, 'main', name, { from: 'seeded', ttl: '1h' }));
  for (const name of names) {
    await lap(timed(name, checkouts), () => c.checkout(db, name));
    const session = await c.open(db, name);
    writeRows(session.path, 'items', 1);
    await lap(timed(name, checkpoints), () => c.checkpoint(db, name, 'one-row'));
    writeRows(session.path, 'items', 9);
    await session.close();
    await lap(timed(name, diffs), async () => {
      const d = await c.diff(seed, `${db}@${name}`);
      const added = d.tables.reduce((a, t) => a + t.added.length, 0);
      if (added !== 10) throw new Error(`the diff shows ${added} added rows, not 10`);
    });
  }
  for (const name of names) await c.destroy(db, name);
  const eps: Steps = {};
  await episode(c, db, 'items', 'ep-warm', {});
  for (let i = 0; i < n; i++) await episode(c, db, 'items', `ep-${i}`, eps);
  return {
    fork: median(forks),
    checkout: median(checkouts),
    checkpoint: median(checkpoints),
    diff: median(diffs),
    episode: median(eps.episode ?? []),
  };
}

async function benchSize(mib: number): Promise<{ bytes: number; n: number; figures: Figures }> {
  const s = makeStoreDir(tmpdir());
  try {
    const db = `s${mib}`;
    const seed = s.file(`${db}.db`);
    // One 3,000-byte row fills a 4 KiB page, so the file comes to about `mib` MiB.
    buildBlobSeed(seed, mib, Math.floor((mib * MiB) / 4096));
    const size = statSync(seed).size;
    const n = mib > 100 ? RUNS_LARGE : RUNS_SMALL;
    const base = await baselines(s, seed, n);
    for (const args of [
      ['create', db, '--from', seed],
      ['checkout', db],
      ['checkpoint', db, 'seeded'],
    ]) {
      const r = s.cli(args);
      if (r.code !== 0) throw new Error(`offshoot ${args.join(' ')}: ${r.stderr}`);
    }
    const d = await startDaemon(s, [], {}, s.file(`${db}.sock`));
    try {
      const c = await connect(d.sock);
      try {
        return { bytes: size, n, figures: { ...base, ...(await offshoot(c, db, n)) } };
      } finally {
        await c.close();
      }
    } finally {
      await d.stop();
    }
  } finally {
    s.cleanup();
  }
}

/** Writes the chart and the page's table drawn from `data`. */
function draw(data: SummaryData): void {
  writeFileSync(`${root}${SUMMARY_FILES.chart}`, renderSvg(data));
  const page = `${root}docs/benchmarks.md`;
  writeFileSync(page, replaceBlock(readFileSync(page, 'utf8'), renderBlock(data)));
}

/** Runs the summary and writes its data file, chart and the page's table. */
export async function summaryBench(): Promise<void> {
  const started = new Date();
  const loadStart = load1();
  const results: Awaited<ReturnType<typeof benchSize>>[] = [];
  for (const mib of SIZES_MIB) {
    results.push(await benchSize(mib));
    console.log(`(summary bench: ${mib} MiB done, load ${load1().toFixed(2)})`);
  }
  const fsType = execFileSync('findmnt', ['-n', '-o', 'FSTYPE', '--target', tmpdir()], { encoding: 'utf8' }).trim();
  const data: SummaryData = {
    date: started.toISOString(),
    command: [
      `OFFSHOOT_BENCH_SUMMARY_SIZES=${SIZES_MIB.join(',')}`,
      `OFFSHOOT_BENCH_SUMMARY_RUNS=${RUNS_SMALL}`,
      `OFFSHOOT_BENCH_SUMMARY_RUNS_LARGE=${RUNS_LARGE}`,
      'make bench-summary',
    ].join(' '),
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model.trim() ?? 'cpu',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      os: `Linux ${release()}`,
      node: process.version.slice(1),
      filesystem: `${fsType} in the temp dir`,
    },
    load: { start: loadStart, end: load1() },
    samples: results.map((r) => r.n),
    sizes: results.map((r) => r.bytes),
    rows: SUMMARY_ROWS.map((r) => ({ id: r.id, ms: results.map((x) => x.figures[r.id] ?? null) })),
  };
  writeFileSync(`${root}${SUMMARY_FILES.data}`, `${JSON.stringify(data, null, 2)}\n`);
  draw(data);
  printTable(
    `summary (medians; load ${data.load.start}–${data.load.end})`,
    ['operation', ...SIZES_MIB.map((m) => `${m} MiB`)],
    data.rows.map((f, i) => [SUMMARY_ROWS[i]?.label ?? f.id, ...f.ms.map((v) => (v === null ? '—' : ms(v)))]),
  );
  console.log(`wrote ${SUMMARY_FILES.data}, ${SUMMARY_FILES.chart} and the table of docs/benchmarks.md`);
}

// `--draw` redraws the chart and the page's table from the committed data file without measuring.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--draw'))
    draw(JSON.parse(readFileSync(`${root}${SUMMARY_FILES.data}`, 'utf8')) as SummaryData);
  else await summaryBench();
}
