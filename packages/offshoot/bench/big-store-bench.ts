import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { connect } from '@offshoot/client';
import { parseDuration } from '../src/core/duration.js';
import { baseKey, refKey } from '../src/core/keys.js';
import { newLineageId } from '../src/core/lineage.js';
import { serializeRef, type Ref } from '../src/core/ref.js';
import { checkout } from '../src/ops/checkout.js';
import { checkpoint } from '../src/ops/checkpoint.js';
import { create } from '../src/ops/create.js';
import { fork } from '../src/ops/fork.js';
import { runGc } from '../src/ops/gc.js';
import { makeContext, type OpsContext } from '../src/ops/helpers/context/context.js';
import { parseStoreSpec } from '../src/store/store-spec.js';
import { Store } from '../src/store/store.js';
import { makeStoreDir, startDaemon, type StoreDir } from '../test/daemon/daemon-process.js';
import { offshootBin } from '../test/support/built-cli.js';
import { median, ms, printTable } from './measure.js';

/**
 * A store that has lived a month: DBS databases of BRANCHES branches in all, each database a deep and wide fork tree
 * (every fork's parent an earlier branch, a third with live TTLs), written straight into the store layout (refs and
 * base pointers as the engine writes them, without fsync) so the generator takes seconds, not hours. Each verb is
 * measured on it and on a store of 10 branches in the same run.
 */
const BRANCHES = Number(process.env.OFFSHOOT_BENCH_BRANCHES ?? 100_000);
const DBS = Number(process.env.OFFSHOOT_BENCH_DBS ?? 100);
const RUNS = 5;

function seedFile(path: string): void {
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
  db.exec("INSERT INTO t(v) VALUES ('seed')");
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

function writeKey(root: string, key: string, body: Buffer | string): void {
  const path = join(root, key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
}

/** Makes `perDb` branches in each of `dbs` databases: real creates, then generated fork refs and base pointers. */
async function generate(ctx: OpsContext, root: string, seed: string, dbs: number, perDb: number): Promise<void> {
  const now = ctx.now().toISOString();
  let x = 7;
  const rnd = (n: number): number => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x % n;
  };
  for (let d = 0; d < dbs; d++) {
    const db = `db-${d}`;
    await create(ctx, db, { from: seed });
    const { ref: main } = await ctx.store.getRef(db, 'main');
    // One real fork per database, so the store's layout is the one base pointers need (the engine raises it).
    await fork(ctx, { db, branch: 'main' }, 'b-1');
    const names = ['main', 'b-1'];
    for (let i = 2; i < perDb; i++) {
      // Deep and wide: half the forks fork the newest branches (long chains of descent), half any earlier one.
      const parent = names[rnd(2) === 0 ? Math.max(0, names.length - 1 - rnd(3)) : rnd(names.length)] as string;
      const name = `b-${i}`;
      const lineage = newLineageId();
      const base = { lineage: main.lineage, txid: main.head_txid };
      writeKey(root, baseKey(lineage), `${JSON.stringify(base)}\n`);
      const ref: Ref = {
        schema: 2,
        lineage,
        epoch: 1,
        head_txid: main.head_txid,
        head_epoch: 1,
        checkpoints: { fork: { txid: main.head_txid, epoch: 1, created_at: now } },
        parent: `${db}@${parent}@${main.head_txid}`,
        touched_at: now,
        base,
      };
      if (i % 3 === 0) ref.ttl = '720h0m0s';
      writeKey(root, refKey(db, name), serializeRef(ref));
      names.push(name);
    }
  }
}

function cli(s: StoreDir, args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(offshootBin, ['-store', s.store, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`offshoot ${args.join(' ')}: ${r.stderr}`);
  return performance.now() - t0;
}

async function timeOps(n: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

interface Figures {
  branches: number;
  nodeStart: number;
  version: number;
  statusDbChanged: number;
  statusDb: number;
  status: number;
  statusStream: number;
  statusActive: number;
  fork: number;
  checkpoint: number;
  daemonBranches: number;
  gc: number;
}

async function measureStore(dbs: number, perDb: number): Promise<Figures> {
  const s = makeStoreDir();
  try {
    const spec = parseStoreSpec(s.store);
    const store = await Store.open(spec);
    const ctx = makeContext(store, s.store, { warn: () => undefined });
    const seed = s.file('seed.db');
    seedFile(seed);
    await generate(ctx, s.store, seed, dbs, perDb);
    // Just written, the database's refs are read one by one; once they have been quiet for the index's two seconds,
    // a status writes its ref index and the next ones read that (docs/architecture.md, "status <db>").
    const statusDbChanged = cli(s, ['status', 'db-0']);
    const changedAt = statSync(join(s.store, 'refs', 'db-0')).mtimeMs;
    await sleep(Math.max(0, changedAt + 2100 - Date.now()));
    cli(s, ['status', 'db-0']);
    const statusDb = median(Array.from({ length: RUNS }, () => cli(s, ['status', 'db-0'])));
    const version = median(Array.from({ length: RUNS }, () => cli(s, ['--version'])));
    const nodeStart = median(
      Array.from({ length: RUNS }, () => {
        const t0 = performance.now();
        spawnSync(process.execPath, ['-e', '0']);
        return performance.now() - t0;
      }),
    );
    const status = median(Array.from({ length: 3 }, () => cli(s, ['status'])));
    const statusStream = median(Array.from({ length: 3 }, () => cli(s, ['status', '--json', '--stream'])));
    const statusActive = median(
      Array.from({ length: 3 }, () => cli(s, ['status', '--state', 'active', '--limit', '10'])),
    );
    const forkMs = await timeOps(RUNS, (i) => fork(ctx, { db: 'db-0', branch: 'main' }, `bench-fork-${i}`));
    const co = await checkout(ctx, { db: 'db-0', branch: 'bench-fork-0' });
    const checkpointMs = await timeOps(RUNS, async (i) => {
      const d = openDatabase(co.path);
      d.prepare('INSERT INTO t(v) VALUES (?)').run(`row ${i}`);
      d.close();
      await checkpoint(ctx, { db: 'db-0', branch: 'bench-fork-0' }, `cp-${i}`);
    });
    const gcStarted = performance.now();
    await runGc(ctx, { grace: parseDuration('15m') });
    const gc = performance.now() - gcStarted;
    await store.close();
    const daemon = await startDaemon(s, ['-reap-every', '0'], {}, s.file('d.sock'));
    let daemonBranches: number;
    try {
      const c = await connect(daemon.sock);
      daemonBranches = await timeOps(RUNS, () => c.branches('db-0'));
      await c.close();
    } finally {
      await daemon.stop();
    }
    return {
      branches: dbs * perDb,
      nodeStart,
      version,
      statusDbChanged,
      statusDb,
      status,
      statusStream,
      statusActive,
      fork: forkMs,
      checkpoint: checkpointMs,
      daemonBranches,
      gc,
    };
  } finally {
    s.cleanup();
  }
}

/** The verbs on a store of BRANCHES branches beside a store of 10, in one run. */
export async function bigStoreBench(): Promise<void> {
  const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const loadBefore = load();
  const small = await measureStore(1, 10);
  const big = await measureStore(DBS, Math.ceil(BRANCHES / DBS));
  const row = (what: string, pick: (f: Figures) => number, goal: string): string[] => [
    what,
    ms(pick(small)),
    ms(pick(big)),
    `${(pick(big) / pick(small)).toFixed(2)}×`,
    goal,
  ];
  printTable(
    `a store that has lived a month: ${big.branches} branches in ${DBS} databases (fork trees, a third with TTLs) against ${small.branches}; load ${loadBefore} before, ${load()} after`,
    ['verb', `${small.branches} branches`, `${big.branches} branches`, 'ratio', 'goal'],
    [
      row('baseline: node -e 0', (f) => f.nodeStart, ''),
      row('baseline: offshoot --version', (f) => f.version, ''),
      row('offshoot status <db>, its refs just written (whole process)', (f) => f.statusDbChanged, ''),
      row('offshoot status <db>, a quiet database (whole process)', (f) => f.statusDb, '≤ 100 ms'),
      row('offshoot status, the whole store', (f) => f.status, '≤ 3 s'),
      row('offshoot status --json --stream, the whole store', (f) => f.statusStream, '≤ 3 s'),
      row('offshoot status --state active --limit 10', (f) => f.statusActive, '≤ 3 s'),
      row('fork (in process)', (f) => f.fork, '≤ 1.2× the small store'),
      row('checkpoint, one row (in process)', (f) => f.checkpoint, '≤ 1.2× the small store'),
      row(`daemon branches of a ${Math.ceil(BRANCHES / DBS)}-branch database`, (f) => f.daemonBranches, '≤ 1.5 s'),
      row('one GC pass, local backend', (f) => f.gc, '≤ 60 s'),
    ],
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bigStoreBench();
