import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { connect, type Client } from '@offshoot/client';
import { makeStoreDir, startDaemon, type StoreDir } from '../test/daemon/daemon-process.js';
import { mountReflinkXfs, reflinkMountMissing, type ReflinkMount } from '../test/support/xfs-reflink.js';
import { median, ms, percentile, printTable } from './measure.js';

const MiB = 1 << 20;
const SIZES_MIB = (process.env.OFFSHOOT_BENCH_EPISODE_SIZES ?? '10,1024').split(',').map(Number);
/** Episodes per measure at ≤ 100 MiB, and above (a 1 GiB episode on ext4 copies the seed). */
const EPISODES_SMALL = Number(process.env.OFFSHOOT_BENCH_EPISODES ?? 100);
const EPISODES_LARGE = Number(process.env.OFFSHOOT_BENCH_EPISODES_LARGE ?? 10);
const WARMUP = 3;
/** Rows of the small JSON dataset's three tables (a few MB of documents, like a benchmark's retail database). */
const JSON_ROWS = { users: 2000, products: 500, orders: 6000 };
/** The Python interpreter with the offshoot package (make bench passes scripts/python-env.sh's); unset: no Python. */
const PYTHON = process.env.OFFSHOOT_BENCH_PYTHON;
const PY_EPISODE = new URL('../../../python/offshoot/bench/episode.py', import.meta.url).pathname;

/**
 * A command the daemon runs under (startDaemon's launcher: it gets the repository's `offshoot` and its arguments):
 * a paired comparison runs another build's daemon this way, in the same minutes.
 */
const LAUNCHER = (process.env.OFFSHOOT_BENCH_DAEMON_LAUNCHER ?? '').split(' ').filter((a) => a !== '');

/** The goals this bench reads its figures against. */
const GOALS = { p50: 15, p99: 50, reflinkFlat: 1.5, ext4OverCp: 2, forkP50: 5, jsonRatio: 0.5 };

interface Filesystem {
  name: string;
  dir: string;
  reflink: boolean;
}

/** Per-step samples (ms) of a series of episodes. */
export type Steps = Record<string, number[]>;

/** A seed of one table of 3,000-byte rows, `mib` MiB of rows at 3,200 bytes each, or `rows` rows. */
export function buildBlobSeed(path: string, mib: number, rows = Math.ceil((mib * MiB) / 3200)): void {
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB)');
  const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(3000))');
  for (let start = 0; start < rows; start += 50_000) {
    db.exec('BEGIN');
    for (let i = start; i < Math.min(rows, start + 50_000); i++) ins.run(`key-${i}`);
    db.exec('COMMIT');
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** A small document store (users, products, orders as JSON text) as SQLite and as one JSON file of the same data. */
export function buildJsonSeed(path: string, jsonPath: string): void {
  let x = 12345;
  const rnd = (n: number): number => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x % n;
  };
  const word = (): string => ['alpha', 'bravo', 'delta', 'echo', 'kilo', 'lima', 'oscar', 'tango'][rnd(8)] as string;
  const data: Record<string, Record<string, unknown>> = { users: {}, products: {}, orders: {} };
  for (let i = 0; i < JSON_ROWS.users; i++)
    data.users![`u${i}`] = {
      user_id: `u${i}`,
      name: { first: word(), last: word() },
      address: { street: `${rnd(999)} ${word()} st`, city: word(), zip: String(10000 + rnd(89999)) },
      email: `${word()}.${i}@example.com`,
      payment_methods: { [`card_${i}`]: { source: 'credit_card', brand: 'visa', last_four: String(1000 + rnd(8999)) } },
      orders: [`o${rnd(JSON_ROWS.orders)}`, `o${rnd(JSON_ROWS.orders)}`],
    };
  for (let i = 0; i < JSON_ROWS.products; i++) {
    const variants: Record<string, unknown> = {};
    for (let v = 0; v < 8; v++)
      variants[`${i}-${v}`] = {
        item_id: `${i}-${v}`,
        options: { color: word(), size: word() },
        price: rnd(50000) / 100,
      };
    data.products![`p${i}`] = { product_id: `p${i}`, name: `${word()} ${word()}`, variants };
  }
  for (let i = 0; i < JSON_ROWS.orders; i++)
    data.orders![`o${i}`] = {
      order_id: `o${i}`,
      user_id: `u${rnd(JSON_ROWS.users)}`,
      items: [{ product_id: `p${rnd(JSON_ROWS.products)}`, price: rnd(50000) / 100, name: `${word()} ${word()}` }],
      status: ['pending', 'delivered', 'cancelled'][rnd(3)],
      payment_history: [{ transaction_type: 'payment', amount: rnd(90000) / 100 }],
    };
  writeFileSync(jsonPath, JSON.stringify(data));
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec('BEGIN');
  for (const [table, rows] of Object.entries(data)) {
    db.exec(`CREATE TABLE ${table}(id INTEGER PRIMARY KEY, k TEXT UNIQUE, body BLOB)`);
    const ins = db.prepare(`INSERT INTO ${table}(k, body) VALUES (?, ?)`);
    for (const [k, v] of Object.entries(rows)) ins.run(k, JSON.stringify(v));
  }
  db.exec('COMMIT');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** `count` single-row inserts (ten by default) in one transaction, as an agent's tool call would write them. */
export function writeRows(path: string, table: string, count = 10): void {
  const db = openDatabase(path);
  try {
    db.pragma('busy_timeout = 5000');
    const ins = db.prepare(`INSERT INTO ${table}(k, body) VALUES (?, ?)`);
    db.exec('BEGIN');
    for (let i = 0; i < count; i++) ins.run(`episode-${i}`, Buffer.alloc(200, 1));
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}

/** One episode through the TypeScript client, each step timed. */
export async function episode(
  c: Client,
  db: string,
  table: string,
  name: string,
  into: Steps,
  ephemeral = false,
): Promise<void> {
  let t = performance.now();
  const lap = (step: string): void => {
    const now = performance.now();
    (into[step] ??= []).push(now - t);
    t = now;
  };
  const t0 = t;
  await c.fork(db, 'main', name, { from: 'seeded', ttl: '1h', ...(ephemeral ? { ephemeral: true } : {}) });
  lap('fork');
  const session = await c.open(db, name);
  lap('open');
  writeRows(session.path, table);
  lap('write');
  // Closing flushes what the agent wrote; the diff then reads the fork's clean checkout in place.
  await session.close();
  lap('close');
  const d = await c.diff(`${db}@main@seeded`, `${db}@${name}`);
  lap('diff');
  const added = d.tables.reduce((a, tb) => a + tb.added.length, 0);
  if (added !== 10) throw new Error(`episode ${name}: the diff shows ${added} added rows, not 10`);
  await c.destroy(db, name);
  lap('destroy');
  (into.episode ??= []).push(performance.now() - t0);
}

/** N timed runs of a command after a settled page cache; the median in ms. */
export function timeCommand(n: number, run: (i: number) => void, after?: (i: number) => void): number {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    execFileSync('sync');
    const t0 = performance.now();
    run(i);
    xs.push(performance.now() - t0);
    after?.(i);
  }
  return median(xs);
}

interface SeedFigures {
  fs: Filesystem;
  label: string;
  mib: number;
  cp: number;
  vacuum: number;
  backup: number;
  jsonReload?: number;
  ts: Steps;
  /** The same loop with ephemeral forks (`{ ephemeral: true }`: no durable store write for a discarded fork). */
  tsEphemeral: Steps;
  py?: Steps & { json_reload?: number[] };
  forkAlone: number[];
}

async function benchSeed(
  s: StoreDir,
  fs: Filesystem,
  label: string,
  table: string,
  build: (seed: string) => string | undefined,
): Promise<SeedFigures> {
  const db = label.replace(/[^a-z0-9]/gi, '').toLowerCase();
  const seed = s.file(`${db}.db`);
  const jsonPath = build(seed);
  const realMib = statSync(seed).size / MiB;
  const n = realMib > 100 ? EPISODES_LARGE : EPISODES_SMALL;
  const k = realMib > 100 ? 3 : 9;
  const dst = s.file('baseline.db');
  const drop = (): void => rmSync(dst, { force: true });
  const cp = timeCommand(k, () => execFileSync('cp', [seed, dst]), drop);
  const vacuum = timeCommand(
    k,
    () => {
      const d = openDatabase(seed, { readonly: true });
      d.exec(`VACUUM INTO '${dst}'`);
      d.close();
    },
    drop,
  );
  const backup = await (async () => {
    const xs: number[] = [];
    for (let i = 0; i < k; i++) {
      execFileSync('sync');
      const d = openDatabase(seed, { readonly: true });
      const t0 = performance.now();
      await d.backup(dst);
      xs.push(performance.now() - t0);
      d.close();
      drop();
    }
    return median(xs);
  })();
  const jsonReload =
    jsonPath === undefined ? undefined : timeCommand(k, () => JSON.parse(readFileSync(jsonPath, 'utf8')));
  for (const args of [
    ['create', db, '--from', seed],
    ['checkout', db],
    ['checkpoint', db, 'seeded'],
  ]) {
    const r = s.cli(args);
    if (r.code !== 0) throw new Error(`offshoot ${args.join(' ')}: ${r.stderr}`);
  }
  const d = await startDaemon(s, [], {}, s.file(`${db}.sock`), LAUNCHER);
  try {
    const c = await connect(d.sock);
    try {
      const warm: Steps = {};
      for (let i = 0; i < WARMUP; i++) await episode(c, db, table, `ts-warm-${i}`, warm);
      const ts: Steps = {};
      const tsEphemeral: Steps = {};
      // Durable and ephemeral episodes alternate, so both series see the same minutes of a shared machine.
      for (let i = 0; i < n; i++) {
        await episode(c, db, table, `ts-ep-${i}`, ts);
        await episode(c, db, table, `ts-eph-${i}`, tsEphemeral, true);
      }
      const forkAlone: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await c.fork(db, 'main', `fork-${i}`, { from: 'seeded', ttl: '1h' });
        forkAlone.push(performance.now() - t0);
      }
      for (let i = 0; i < n; i++) await c.destroy(db, `fork-${i}`);
      let py: SeedFigures['py'];
      if (PYTHON !== undefined && PYTHON !== '') {
        const args = [PY_EPISODE, d.sock, db, 'seeded', table, String(n), ...(jsonPath ? [jsonPath] : [])];
        const out = execFileSync(PYTHON, args, { encoding: 'utf8', maxBuffer: 16 * MiB });
        const parsed = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { steps: Steps; json_reload?: number[] };
        py = { ...parsed.steps, ...(parsed.json_reload ? { json_reload: parsed.json_reload } : {}) };
      }
      return {
        fs,
        label,
        mib: realMib,
        cp,
        vacuum,
        backup,
        ...(jsonReload !== undefined ? { jsonReload } : {}),
        ts,
        tsEphemeral,
        ...(py ? { py } : {}),
        forkAlone,
      };
    } finally {
      await c.close();
    }
  } finally {
    await d.stop();
  }
}

function loadNow(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

function stepSummary(steps: Steps): string {
  return ['fork', 'open', 'write', 'close', 'diff', 'destroy']
    .map((k) => `${k} ${ms(median(steps[k] ?? []))}`)
    .join(', ');
}

/** The episode loop, fan-in of every figure above with its baseline and ratio. */
export async function episodeBench(): Promise<void> {
  const filesystems: Filesystem[] = [{ name: 'ext4', dir: tmpdir(), reflink: false }];
  let mount: ReflinkMount | undefined;
  const missing = reflinkMountMissing();
  if (missing === undefined) {
    mount = mountReflinkXfs(Math.max(4096, 4 * Math.max(...SIZES_MIB) + 2048));
    filesystems.push({ name: 'xfs+reflink', dir: mount.dir, reflink: true });
  } else console.log(`\n(episode bench: no reflink filesystem: ${missing})`);
  const all: SeedFigures[] = [];
  try {
    for (const fs of filesystems) {
      const s = makeStoreDir(fs.dir);
      try {
        const loadBefore = loadNow();
        for (const mib of SIZES_MIB)
          all.push(
            await benchSeed(s, fs, `items ${mib} MiB`, 'items', (seed) => {
              buildBlobSeed(seed, mib);
              return undefined;
            }),
          );
        all.push(
          await benchSeed(s, fs, 'json docs', 'orders', (seed) => {
            const json = s.file('retail.json');
            buildJsonSeed(seed, json);
            return json;
          }),
        );
        console.log(`\n(episode bench on ${fs.name}: load average ${loadBefore} before, ${loadNow()} after)`);
      } finally {
        s.cleanup();
      }
    }
  } finally {
    mount?.unmount();
  }
  report(all);
}

function report(all: SeedFigures[]): void {
  const rows: string[][] = [];
  for (const f of all) {
    for (const [client, steps] of [
      ['ts', f.ts],
      ['ts ephemeral', f.tsEphemeral],
      ['py', f.py],
    ] as const) {
      if (!steps) continue;
      const ep = steps.episode ?? [];
      rows.push([
        f.fs.name,
        `${f.label} (${f.mib.toFixed(1)} MiB)`,
        client,
        String(ep.length),
        ms(percentile(ep, 50)),
        ms(percentile(ep, 99)),
        ms(f.cp),
        (percentile(ep, 50) / f.cp).toFixed(2) + '×',
        ms(f.vacuum),
        ms(f.backup),
        f.jsonReload === undefined
          ? ''
          : `${ms(client === 'py' ? median(f.py?.json_reload ?? []) : f.jsonReload)} → ${(percentile(ep, 50) / (client === 'py' ? median(f.py?.json_reload ?? []) : f.jsonReload)).toFixed(2)}×`,
      ]);
    }
  }
  printTable(
    `episode loop (fork a checkpoint, open a session, write 10 rows, close it (a flush), diff --json, destroy); goals: p50 ≤ ${GOALS.p50} ms and p99 ≤ ${GOALS.p99} ms at 10 MB, reflink 1 GB ≤ ${GOALS.reflinkFlat}× 10 MB, ext4 1 GB ≤ ${GOALS.ext4OverCp}× cp, JSON docs ≤ ${GOALS.jsonRatio}× a JSON reload`,
    ['fs', 'seed', 'client', 'n', 'p50', 'p99', 'cp', 'p50/cp', 'VACUUM INTO', 'backup API', 'JSON reload → ratio'],
    rows,
  );
  const steps: string[][] = [];
  for (const f of all) {
    steps.push([f.fs.name, f.label, 'ts', stepSummary(f.ts)]);
    steps.push([f.fs.name, f.label, 'ts ephemeral', stepSummary(f.tsEphemeral)]);
    if (f.py) steps.push([f.fs.name, f.label, 'py', stepSummary(f.py)]);
  }
  printTable('episode steps (medians)', ['fs', 'seed', 'client', 'steps'], steps);
  const flat: string[][] = [];
  for (const fs of new Set(all.map((f) => f.fs.name))) {
    const mine = all.filter((f) => f.fs.name === fs && f.label.startsWith('items'));
    const small = mine[0];
    const large = mine[mine.length - 1];
    if (!small || !large || small === large) continue;
    for (const client of ['ts', 'py'] as const) {
      const a = client === 'ts' ? small.ts.episode : small.py?.episode;
      const b = client === 'ts' ? large.ts.episode : large.py?.episode;
      if (!a || !b) continue;
      flat.push([
        fs,
        client,
        `${ms(percentile(a, 50))} → ${ms(percentile(b, 50))}`,
        (percentile(b, 50) / percentile(a, 50)).toFixed(2) + '×',
        `${(percentile(b, 50) / large.cp).toFixed(2)}× cp`,
      ]);
    }
  }
  printTable(
    'episode at the largest seed against the smallest',
    ['fs', 'client', 'p50', 'ratio', 'largest / cp'],
    flat,
  );
  printTable(
    `fork alone through the daemon (TypeScript client; goal p50 ≤ ${GOALS.forkP50} ms)`,
    ['fs', 'seed', 'n', 'p50', 'p99'],
    all.map((f) => [
      f.fs.name,
      f.label,
      String(f.forkAlone.length),
      ms(percentile(f.forkAlone, 50)),
      ms(percentile(f.forkAlone, 99)),
    ]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await episodeBench();
