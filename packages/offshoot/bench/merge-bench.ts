import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkout } from '../src/ops/checkout.js';
import { checkpoint } from '../src/ops/checkpoint.js';
import { create } from '../src/ops/create.js';
import { diff } from '../src/ops/diff.js';
import { fork } from '../src/ops/fork.js';
import { makeContext, type OpsContext } from '../src/ops/helpers/context/context.js';
import { merge } from '../src/ops/merge.js';
import { setProtected } from '../src/ops/protect.js';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { parseStoreSpec } from '../src/store/store-spec.js';
import { Store } from '../src/store/store.js';
import { ms, printTable, timeMedian } from './measure.js';

const MiB = 1 << 20;
const CHANGED = 1000;
const RUNS = 3;

/** A database of `size` bytes: rows of a 3,000-byte blob, keyed by an INTEGER PRIMARY KEY. */
function buildDatabase(path: string, size: number): number {
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB)');
  const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(3000))');
  const rows = Math.ceil(size / 3200);
  db.exec('BEGIN');
  for (let i = 0; i < rows; i++) ins.run(`key-${i}`);
  db.exec('COMMIT');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return rows;
}

/** CHANGED rows spread over the whole table, `offset` apart from another side's: the two sides never share a row. */
function changeRows(ctx: OpsContext, branch: string, rows: number, offset: number): Promise<unknown> {
  return checkout(ctx, { db: 'bench', branch }).then((co) => {
    const step = Math.floor(rows / CHANGED);
    execFileSync('sqlite3', [
      co.path,
      `UPDATE items SET k = '${branch}-' || id WHERE id % ${step} = ${offset} AND id <= ${step * CHANGED};`,
    ]);
    return checkpoint(ctx, { db: 'bench', branch }, 'changed');
  });
}

/**
 * Two forks of one database, each with CHANGED rows updated (disjoint): the merge of one into the other (three-way,
 * from their common fork point) beside the diff of the two, at each size.
 */
async function benchSize(size: number): Promise<string[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-merge-bench-'));
  try {
    const root = join(dir, 'store');
    const spec = parseStoreSpec(root);
    await Store.init(spec);
    const ctx = makeContext(await Store.open(spec), root, { warn: () => undefined });
    const src = join(dir, 'src.db');
    const rows = buildDatabase(src, size);
    await create(ctx, 'bench', { from: src });
    await setProtected(ctx, { db: 'bench', branch: 'main' }, false);
    const targets = Array.from({ length: RUNS }, (_, i) => `b-${i}`);
    await fork(ctx, { db: 'bench', branch: 'main' }, 'a');
    for (const b of targets) await fork(ctx, { db: 'bench', branch: 'main' }, b);
    await changeRows(ctx, 'a', rows, 0);
    for (const b of targets) await changeRows(ctx, b, rows, 1);
    const a = { db: 'bench', branch: 'a' };
    const diffMs = await timeMedian(RUNS, () => diff(ctx, a, { db: 'bench', branch: 'b-0' }));
    let updated = 0;
    const mergeMs = await timeMedian(RUNS, async (i) => {
      const r = await merge(ctx, a, targets[i] as string);
      updated = r.tables.reduce((n, t) => n + t.updated, 0);
    });
    if (updated !== CHANGED) throw new Error(`merge updated ${updated} rows, not ${CHANGED}`);
    const label = `${Math.round(size / MiB)} MiB`;
    return [
      [label, `diff of two forks, ${CHANGED} rows changed on each`, ms(diffMs), ''],
      [
        label,
        `merge of one into the other (${CHANGED} rows taken)`,
        ms(mergeMs),
        `${(mergeMs / diffMs).toFixed(1)}× the diff`,
      ],
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the merge benchmark for OFFSHOOT_BENCH_MERGE_SIZES (MiB, comma-separated; default 1024). */
export async function mergeBench(): Promise<void> {
  const sizes = (process.env.OFFSHOOT_BENCH_MERGE_SIZES ?? '1024').split(',').map((s) => Number(s) * MiB);
  const rows: string[][] = [];
  for (const size of sizes) rows.push(...(await benchSize(size)));
  printTable('merge (local store, medians)', ['size', 'operation', 'median', 'compared'], rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await mergeBench();
