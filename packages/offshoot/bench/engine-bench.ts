import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { checkout } from '../src/ops/checkout.js';
import { checkpoint } from '../src/ops/checkpoint.js';
import { makeContext, type OpsContext } from '../src/ops/helpers/context/context.js';
import { create } from '../src/ops/create.js';
import { diff } from '../src/ops/diff.js';
import { exportTo } from '../src/ops/export.js';
import { fork } from '../src/ops/fork.js';
import { chainCacheDir } from '../src/ops/helpers/context/paths.js';
import { resolveTargetChain } from '../src/ops/helpers/branch/resolve-target.js';
import { Store } from '../src/store/store.js';
import { parseStoreSpec } from '../src/store/store-spec.js';
import { diffDatabases } from '../src/sqlite/diff/diff-databases.js';
import { bytes, ms, printTable, timeAndCpuMedian, timeMedian } from './measure.js';

const MiB = 1 << 20;

function buildDatabase(path: string, size: number): void {
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec(
    'CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB); CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT)',
  );
  const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(3000))');
  const rows = Math.ceil(size / 3200);
  db.exec('BEGIN');
  for (let i = 0; i < rows; i++) ins.run(`key-${i}`);
  db.exec('COMMIT');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function dirUsage(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let total = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    const st = await stat(join(dir, name)).catch(() => undefined);
    if (st?.isFile()) {
      files++;
      total += st.size;
    }
  }
  return { files, bytes: total };
}

async function storeUsage(root: string): Promise<{ files: number; bytes: number }> {
  const data = await dirUsage(join(root, 'data'));
  const refs = await dirUsage(join(root, 'refs'));
  return { files: data.files + refs.files, bytes: data.bytes + refs.bytes };
}

/** Benchmarks the at-rest engine at one database size against cp, VACUUM INTO and the backup API. */
async function benchSize(size: number): Promise<string[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-bench-'));
  try {
    const root = join(dir, 'store');
    const spec = parseStoreSpec(root);
    await Store.init(spec);
    const ctx: OpsContext = makeContext(await Store.open(spec), root, { warn: () => undefined });
    const src = join(dir, 'src.db');
    buildDatabase(src, size);
    const fileSize = statSync(src).size;
    await create(ctx, 'bench', { from: src });
    const main = { db: 'bench', branch: 'main' };
    const co = await checkout(ctx, main);
    await checkpoint(ctx, main, 'base');

    // Every timed copy starts from a flushed page cache state, so writeback of earlier steps does not land in it.
    const settle = () => execFileSync('sync');
    const cp = await timeMedian(3, (i) => execFileSync('cp', [src, join(dir, `cp-${i}.db`)]), settle);
    for (let i = 0; i < 3; i++) rmSync(join(dir, `cp-${i}.db`), { force: true });
    // The cold paths fsync what they write; so does this baseline (coreutils sync FILE fsyncs that file).
    const cpSync = await timeMedian(
      3,
      (i) => {
        execFileSync('cp', [src, join(dir, `cps-${i}.db`)]);
        execFileSync('sync', [join(dir, `cps-${i}.db`)]);
      },
      settle,
    );
    for (let i = 0; i < 3; i++) rmSync(join(dir, `cps-${i}.db`), { force: true });
    const vacuum = await timeMedian(3, (i) => {
      const db = openDatabase(src, { readonly: true });
      db.exec(`VACUUM INTO '${join(dir, `vac-${i}.db`)}'`);
      db.close();
      rmSync(join(dir, `vac-${i}.db`));
    });
    const backup = await timeMedian(3, async (i) => {
      const db = openDatabase(src, { readonly: true });
      await db.backup(join(dir, `bk-${i}.db`));
      db.close();
      rmSync(join(dir, `bk-${i}.db`));
    });

    const before = await storeUsage(root);
    const forkHead = await timeMedian(5, (i) => fork(ctx, main, `head-${i}`));
    const after = await storeUsage(root);
    const forkAt = await timeMedian(5, (i) => fork(ctx, main, `at-${i}`, { at: 'base' }));
    const perForkObjects = (after.files - before.files) / 5;
    const perForkBytes = (after.bytes - before.bytes) / 5;

    let cpBytes = 0;
    const oneRow = await timeMedian(
      3,
      async (i) => {
        const r = await checkpoint(ctx, main, `row-${i}`);
        cpBytes = Math.max(cpBytes, r.bytes);
      },
      (i) => execFileSync('sqlite3', [co.path, `UPDATE items SET k = 'changed-${i}' WHERE id = ${1 + i * 7}`]),
    );

    const cold = await timeAndCpuMedian(
      3,
      (i) => checkout(ctx, { db: 'bench', branch: `head-${i}` }),
      () => {
        rmSync(chainCacheDir(root, 'bench'), { recursive: true, force: true });
        settle();
      },
    );
    const exported = await timeAndCpuMedian(
      3,
      (i) => exportTo(ctx, { db: 'bench', branch: `head-${i}` }, join(dir, `export-${i}.db`)),
      () => {
        rmSync(chainCacheDir(root, 'bench'), { recursive: true, force: true });
        settle();
      },
    );
    const members = (await resolveTargetChain(ctx, { db: 'bench', branch: 'head-0' })).members.length;
    const warm = await timeMedian(3, (i) => checkout(ctx, { db: 'bench', branch: `at-${i}` }), settle);
    const clean = await timeMedian(5, () => checkout(ctx, main));

    await fork(ctx, main, 'left');
    await fork(ctx, main, 'right');
    const right = await checkout(ctx, { db: 'bench', branch: 'right' });
    execFileSync('sqlite3', [right.path, "UPDATE items SET k = 'diff' WHERE id = 3"]);
    await checkpoint(ctx, { db: 'bench', branch: 'right' }, 'one-row');
    await diff(ctx, { db: 'bench', branch: 'left' }, { db: 'bench', branch: 'right' });
    const diffMs = await timeMedian(3, () =>
      diff(ctx, { db: 'bench', branch: 'left' }, { db: 'bench', branch: 'right' }),
    );
    const leftCo = await checkout(ctx, { db: 'bench', branch: 'left' });
    const fullCompare = await timeMedian(3, () => diffDatabases(leftCo.path, right.path));

    const label = bytes(fileSize);
    const ratio = (x: number) => `${((100 * x) / cp).toFixed(1)}% of cp`;
    const rate = (x: number) => `${(fileSize / 1e6 / (x / 1000)).toFixed(0)} MB/s`;
    return [
      [label, 'cp (baseline)', ms(cp), ''],
      [label, 'cp + fsync (baseline)', ms(cpSync), ratio(cpSync)],
      [label, 'VACUUM INTO', ms(vacuum), ratio(vacuum)],
      [label, 'backup API', ms(backup), ratio(backup)],
      [
        label,
        'fork at head',
        ms(forkHead),
        `${ratio(forkHead)}; ${perForkObjects} objects, ${bytes(perForkBytes)} per fork`,
      ],
      [label, 'fork at checkpoint', ms(forkAt), ratio(forkAt)],
      [label, 'checkpoint, one row changed', ms(oneRow), `${ratio(oneRow)}; ${bytes(cpBytes)} written`],
      [
        label,
        `checkout, cold (${members}-member chain)`,
        ms(cold.wall),
        `${rate(cold.wall)}; ${(cold.wall / cpSync).toFixed(2)}× cp + fsync; CPU ${ms(cold.cpu)} = ${rate(cold.cpu)}`,
      ],
      [
        label,
        'export, cold',
        ms(exported.wall),
        `${rate(exported.wall)}; ${(exported.wall / cpSync).toFixed(2)}× cp + fsync; CPU ${ms(exported.cpu)} = ${rate(exported.cpu)}`,
      ],
      [label, 'checkout, warm (cached chain)', ms(warm), ratio(warm)],
      [label, 'checkout, clean (reuse)', ms(clean), ratio(clean)],
      [label, 'diff of forks 1 row apart', ms(diffMs), `${ratio(diffMs)}; ${(diffMs / fullCompare).toFixed(3)}× full`],
      [label, 'full table compare (baseline)', ms(fullCompare), ratio(fullCompare)],
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the engine benchmarks for OFFSHOOT_BENCH_SIZES (MiB, comma-separated; default 10,100,1024). */
export async function engineBench(): Promise<void> {
  const sizes = (process.env.OFFSHOOT_BENCH_SIZES ?? '10,100,1024').split(',').map((s) => Number(s) * MiB);
  const rows: string[][] = [];
  for (const size of sizes) rows.push(...(await benchSize(size)));
  printTable('engine (local store, medians)', ['size', 'operation', 'median', 'compared'], rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await engineBench();
