import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { checkout } from '../src/ops/checkout.js';
import { checkpoint } from '../src/ops/checkpoint.js';
import { makeContext, type OpsContext } from '../src/ops/helpers/context/context.js';
import { create } from '../src/ops/create.js';
import { fork } from '../src/ops/fork.js';
import { runGc } from '../src/ops/gc.js';
import { status } from '../src/ops/status.js';
import { parseDuration } from '../src/core/duration.js';
import { chainCacheDir, checkoutFiles } from '../src/ops/helpers/context/paths.js';
import { Session } from '../src/session/session.js';
import type { Backend } from '../src/store/backend.js';
import { LocalBackend } from '../src/store/local/local-backend.js';
import { openS3Backend } from '../src/store/s3/s3-backend.js';
import { parseStoreSpec, type StoreSpec } from '../src/store/store-spec.js';
import { Store } from '../src/store/store.js';
import { BACKEND_METHODS, countingBackend, type CountingBackend } from '../test/store/fault-backend.js';
import { S3_ENDPOINT, createTestBucket } from '../test/store/s3-test-env.js';
import { bytes, ms, printTable, timeMedian } from './measure.js';

const MiB = 1 << 20;
const DB_BYTES = 32 * MiB;
const main = { db: 'bench', branch: 'main' };

/** What one operation cost on one store: median wall time and the requests of its last run, per method. */
interface Cost {
  ms: number;
  requests: string;
}

/** The operations measured, in table order. */
const OPS = [
  'fork (shared)',
  'checkpoint, one row changed',
  'checkout, cold (empty cache)',
  'checkout, warm (cached chain)',
  'session flush, one row changed',
  'status of the database',
  'one GC pass',
] as const;
type Op = (typeof OPS)[number];

/** A ~32 MiB database: one incompressible row per page, so stored objects are as large as the file. */
function buildDatabase(path: string): void {
  const db = openDatabase(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB)');
  const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(3000))');
  db.exec('BEGIN');
  for (let i = 0; i < DB_BYTES / 4200; i++) ins.run(`key-${i}`);
  db.exec('COMMIT');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Requests per method, the methods that were called only. */
function requestsOf(c: CountingBackend): string {
  const used = BACKEND_METHODS.filter((m) => c.counts[m] > 0).map((m) => `${m} ${c.counts[m]}`);
  return used.length === 0 ? 'none' : used.join(', ');
}

/** Times `runs` runs of fn (each after an untimed setup) and keeps the last run's request counts. */
async function measure(
  counter: CountingBackend,
  runs: number,
  fn: (i: number) => Promise<unknown>,
  setup?: (i: number) => unknown,
): Promise<Cost> {
  const median = await timeMedian(runs, fn, async (i) => {
    await setup?.(i);
    counter.reset();
  });
  return { ms: median, requests: requestsOf(counter) };
}

/** Runs every operation against one store (an initialized spec, reached through `backend`). */
async function benchStore(spec: StoreSpec, backend: Backend, dir: string, src: string): Promise<Map<Op, Cost>> {
  const counter = countingBackend(backend);
  const store = await Store.open(spec, { backend: counter });
  const root = join(dir, 'checkouts');
  const ctx: OpsContext = makeContext(store, root, { warn: () => undefined });
  const out = new Map<Op, Cost>();
  try {
    await create(ctx, 'bench', { from: src });
    const co = await checkout(ctx, main);
    // The first fork moves the store to the shared layout once; what is measured is every fork after it.
    await fork(ctx, main, 'first');
    out.set(OPS[0], await measure(counter, 5, (i) => fork(ctx, main, `f${i}`)));
    out.set(
      OPS[1],
      await measure(
        counter,
        3,
        (i) => checkpoint(ctx, main, `row-${i}`),
        (i) => execFileSync('sqlite3', [co.path, `UPDATE items SET k = 'changed-${i}' WHERE id = ${1 + i * 7}`]),
      ),
    );
    out.set(
      OPS[2],
      await measure(
        counter,
        3,
        (i) => checkout(ctx, { db: 'bench', branch: `f${i}` }),
        () => rmSync(chainCacheDir(root, 'bench'), { recursive: true, force: true }),
      ),
    );
    out.set(
      OPS[3],
      await measure(
        counter,
        3,
        (i) => checkout(ctx, { db: 'bench', branch: `f${i}` }),
        (i) => {
          for (const f of checkoutFiles(join(root, 'checkouts', 'bench', `f${i}.db`))) rmSync(f, { force: true });
        },
      ),
    );
    const session = await Session.open(ctx, main, {});
    try {
      out.set(
        OPS[4],
        await measure(
          counter,
          3,
          () => session.flush({ kind: 'manual' }),
          (i) => execFileSync('sqlite3', [co.path, `UPDATE items SET k = 'live-${i}' WHERE id = ${3 + i * 11}`]),
        ),
      );
    } finally {
      await session.close();
    }
    out.set(OPS[5], await measure(counter, 3, () => status(ctx, { db: 'bench' })));
    out.set(OPS[6], await measure(counter, 3, () => runGc(ctx, { grace: parseDuration('15m') })));
    return out;
  } finally {
    await store.close();
  }
}

/**
 * Benchmarks fork, checkpoint, checkout, session flush, status and a GC pass on a local store and on the S3 test
 * server, side by side, with the requests each made.
 */
export async function s3Bench(): Promise<void> {
  if (S3_ENDPOINT === undefined) {
    console.log('\ns3 bench: skipped (OFFSHOOT_TEST_S3_ENDPOINT is not set; run it through scripts/with-s3-server.sh)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-bench-'));
  const bucket = await createTestBucket();
  try {
    const src = join(dir, 'src.db');
    buildDatabase(src);
    const localRoot = join(dir, 'store');
    const localSpec = parseStoreSpec(localRoot);
    await (await Store.init(localSpec)).close();
    const local = await benchStore(localSpec, new LocalBackend(localRoot), join(dir, 'local'), src);
    const s3Spec = parseStoreSpec(`s3://${bucket.name}/bench`);
    const s3Options = {
      bucket: bucket.name,
      prefix: 'bench',
      endpoint: S3_ENDPOINT,
      region: 'us-east-1',
      pathStyle: true,
    };
    await (await Store.init(s3Spec, { backend: await openS3Backend(s3Options) })).close();
    const s3 = await benchStore(s3Spec, await openS3Backend(s3Options), join(dir, 's3'), src);
    const rows = OPS.map((op) => {
      const l = local.get(op);
      const r = s3.get(op);
      return [op, l ? ms(l.ms) : '-', l?.requests ?? '-', r ? ms(r.ms) : '-', r?.requests ?? '-'];
    });
    printTable(
      `s3 vs local store (${bytes(statSync(src).size)} database, medians; requests of one run)`,
      ['operation', 'local', 'local requests', 's3 (moto)', 's3 requests'],
      rows,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await bucket.remove();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await s3Bench();
