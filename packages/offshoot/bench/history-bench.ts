import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseDuration } from '../src/core/duration.js';
import { parseDataKey } from '../src/core/keys.js';
import { config } from '../src/ops/config.js';
import { create } from '../src/ops/create.js';
import { exportTo } from '../src/ops/export.js';
import { fork } from '../src/ops/fork.js';
import { runGc } from '../src/ops/gc.js';
import { makeContext, type OpsContext } from '../src/ops/context.js';
import { readLog, resolvePoint } from '../src/ops/log.js';
import { Session } from '../src/session/session.js';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import type { Backend } from '../src/store/backend.js';
import { openS3Backend } from '../src/store/s3/s3-backend.js';
import { parseStoreSpec } from '../src/store/store-spec.js';
import { Store } from '../src/store/store.js';
import { S3_ENDPOINT, createTestBucket } from '../test/store/s3-test-env.js';
import { bytes, median, printTable, timeMedian } from './measure.js';

const MiB = 1 << 20;
const CLI = fileURLToPath(new URL('../../../offshoot', import.meta.url));

function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`;
}

/** A database of about `size` bytes: rows of 3 KB. */
function buildDatabase(path: string, size: number): number {
  const db = openDatabase(path);
  db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB)');
  const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(3000))');
  const rows = Math.ceil(size / 3200);
  db.exec('BEGIN');
  for (let i = 0; i < rows; i++) ins.run(`key-${i}`);
  db.exec('COMMIT');
  db.close();
  return rows;
}

/** A store with db `app` of `size` bytes and a fork `agent` a session flushed `flushes` times, one row each. */
async function historyStore(
  dir: string,
  size: number,
  flushes: number,
): Promise<{ ctx: OpsContext; store: Store; times: string[]; written: number }> {
  const spec = parseStoreSpec(join(dir, 'store'));
  await (await Store.init(spec)).close();
  const store = await Store.open(spec);
  const ctx = makeContext(store, dir, { warn: () => undefined });
  const src = join(dir, 'src.db');
  const rows = buildDatabase(src, size);
  await create(ctx, 'app', { from: src });
  await fork(ctx, { db: 'app', branch: 'main' }, 'agent');
  const session = await Session.open(
    { ...ctx, origin: { actor: 'agent', surface: 'sdk:bench/node', meta: { run: 'bench' } } },
    { db: 'app', branch: 'agent' },
    {},
  );
  const times: string[] = [];
  let written = 0;
  try {
    const db = openDatabase(session.path);
    const upd = db.prepare('UPDATE items SET body = randomblob(3000) WHERE id = ?');
    for (let i = 0; i < flushes; i++) {
      upd.run(1 + ((i * 2654435761) % rows));
      written += (await session.flush({ kind: 'manual' })).bytes ?? 0;
      times.push(new Date().toISOString());
    }
    db.close();
  } finally {
    await session.close();
  }
  return { ctx, store, times, written };
}

/** Every key under prefix with its bytes, copied from one backend into another. */
async function copyPrefix(from: Backend, to: Backend, prefix: string): Promise<void> {
  const keys = await from.listKeys(prefix);
  for (let i = 0; i < keys.length; i += 32)
    await Promise.all(keys.slice(i, i + 32).map(async (k) => to.put(k, (await from.get(k)).body)));
}

/** `log` of a branch with `records` records: the default page, every record, a time filter; local and S3. */
async function logCase(records: number): Promise<string[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-bench-log-'));
  const out: string[][] = [];
  try {
    const { ctx, store, times } = await historyStore(dir, MiB, records - 1);
    const t = { db: 'app', branch: 'agent' };
    const objects = await store.listLogObjects('app', 'agent');
    const logBytes = (await store.backend.list('log/')).reduce((a, o) => a + o.size, 0);
    const ref = statSync(join(dir, 'store', 'refs', 'app', 'agent')).size;
    const since = new Date(Date.parse(times[Math.floor(times.length * 0.9)] ?? ''));
    const row = async (where: string, c: OpsContext): Promise<string[]> => {
      const page = await timeMedian(5, () => readLog(c, t));
      const all = await timeMedian(5, () => readLog(c, t, { limit: 0 }));
      const recent = await timeMedian(5, () => readLog(c, t, { since, limit: 0 }));
      const n = (await readLog(c, t, { limit: 0 })).records.length;
      return [where, String(n), ms(page), ms(all), ms(recent)];
    };
    out.push(await row('local', ctx));
    const cli = await timeMedian(3, () =>
      execFileSync(CLI, ['-store', join(dir, 'store'), 'log', 'app@agent', '--limit', '0', '--json'], {
        maxBuffer: 64 * MiB,
      }),
    );
    out.push(['local, `offshoot log --limit 0 --json` (a process)', '', '', ms(cli), '']);
    if (S3_ENDPOINT !== undefined) {
      const bucket = await createTestBucket();
      try {
        const opts = {
          bucket: bucket.name,
          prefix: 'bench',
          endpoint: S3_ENDPOINT,
          region: 'us-east-1',
          pathStyle: true,
        };
        const spec = parseStoreSpec(`s3://${bucket.name}/bench`);
        await (await Store.init(spec, { backend: await openS3Backend(opts) })).close();
        const s3 = await Store.open(spec, { backend: await openS3Backend(opts) });
        await copyPrefix(store.backend, s3.backend, 'log/');
        await copyPrefix(store.backend, s3.backend, 'refs/');
        out.push(await row('s3 (moto)', makeContext(s3, join(dir, 's3'), { warn: () => undefined })));
        await s3.close();
      } finally {
        await bucket.remove();
      }
    }
    out.push([`(${objects.length} log objects, ${bytes(logBytes)}; the ref ${bytes(ref)})`, '', '', '', '']);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Data bytes in the store. */
async function dataBytes(store: Store): Promise<number> {
  return (await store.backend.list('data/'))
    .filter((o) => parseDataKey(o.key) !== undefined)
    .reduce((a, o) => a + o.size, 0);
}

/**
 * Export of the head beside an export of a moment (`@tx:`, `@at:`) in the middle of `flushes` one-row flushes of a
 * `size` database; then what the window keeps: data bytes after GC with the default window and with none.
 */
async function momentCase(size: number, flushes: number): Promise<{ exports: string[][]; window: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-bench-moment-'));
  try {
    const { ctx, store, times, written } = await historyStore(dir, size, flushes);
    const mid = Math.floor(flushes / 2);
    const tx = 1 + mid + 1;
    const at = times[mid] ?? '';
    const out = join(dir, 'out.db');
    const exportOf = (checkpoint?: string) => () =>
      exportTo(ctx, { db: 'app', branch: 'agent', ...(checkpoint ? { checkpoint } : {}) }, out, { force: true });
    // Warmed once, then each measured in turn, so no target pays for a cold page cache the others do not.
    await exportOf()();
    const head: number[] = [];
    const byTx: number[] = [];
    const byAt: number[] = [];
    for (let i = 0; i < 5; i++) {
      head.push(await timeMedian(1, exportOf()));
      byTx.push(await timeMedian(1, exportOf(`tx:${tx}`)));
      byAt.push(await timeMedian(1, exportOf(`at:${at}`)));
    }
    const { ref } = await store.getRef('app', 'agent');
    const t = { db: 'app', branch: 'agent' };
    const resolveTx = await timeMedian(5, () => resolvePoint(ctx, t, ref, `tx:${tx}`));
    const resolveAt = await timeMedian(5, () => resolvePoint(ctx, t, ref, `at:${at}`));
    const exports = [
      [bytes(size), `${flushes} flushes`, 'the head', ms(median(head)), ''],
      [bytes(size), `${flushes} flushes`, `@tx:${tx} (the middle)`, ms(median(byTx)), ms(resolveTx)],
      [bytes(size), `${flushes} flushes`, `@at:<time of txid ${tx}>`, ms(median(byAt)), ms(resolveAt)],
    ];
    const grace = parseDuration('0s');
    await runGc(ctx, { grace });
    await runGc(ctx, { grace });
    const kept = await dataBytes(store);
    await config(ctx, 'app', { history_window: '1ns' });
    await runGc(ctx, { grace });
    await runGc(ctx, { grace });
    const bare = await dataBytes(store);
    await store.close();
    return {
      exports,
      window: [
        bytes(size),
        `${flushes} one-row flushes`,
        bytes(written),
        bytes(kept),
        bytes(bare),
        `${bytes(kept - bare)} (${((kept - bare) / Math.max(1, written)).toFixed(2)}× the flushes' bytes)`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The branch log and moments: `log` of a branch with 10,000 records (OFFSHOOT_BENCH_LOG_RECORDS), a time-addressed
 * export beside a plain one, and what the history window keeps (OFFSHOOT_BENCH_MOMENT="MiB:flushes").
 */
export async function historyBench(): Promise<void> {
  const records = Number(process.env.OFFSHOOT_BENCH_LOG_RECORDS ?? 10_000);
  printTable(
    `log of a branch with ${records} records (session flushes; medians of 5)`,
    ['store', 'records', 'default (newest 100)', 'every record', '--since (newest 10%)'],
    await logCase(records),
  );
  const [size, flushes] = (process.env.OFFSHOOT_BENCH_MOMENT ?? '64:1000').split(':').map(Number);
  const m = await momentCase((size ?? 64) * MiB, flushes ?? 1000);
  printTable(
    'export by moment (local store, medians of 5, interleaved)',
    ['size', 'history', 'target', 'export', 'of which resolving the moment'],
    m.exports,
  );
  printTable(
    'what the history window keeps (local store, after GC)',
    [
      'size',
      'written inside the window',
      'flushes wrote',
      'data kept, window 24h',
      'data kept, no window',
      'the window costs',
    ],
    [m.window],
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await historyBench();
