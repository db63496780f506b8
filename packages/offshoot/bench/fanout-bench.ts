import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { connect, type Client } from '@offshoot/client';
import { makeStoreDir, startDaemon, type StoreDir } from '../test/daemon/daemon-process.js';
import { bytes, ms, printTable } from './measure.js';

/** Forks per measure (the goal's 1,000), and the client connections the concurrent form spreads them over. */
const FORKS = Number(process.env.OFFSHOOT_BENCH_FANOUT ?? 1000);
const CONNECTIONS = Number(process.env.OFFSHOOT_BENCH_FANOUT_CONNECTIONS ?? 32);
const GOAL_TOTAL_MS = 2000;
const GOAL_BYTES_PER_FORK = 1024;

/** Files and bytes under the store's data/ and refs/ (what forks add). */
function storeUsage(root: string): { files: number; bytes: number } {
  let files = 0;
  let total = 0;
  for (const top of ['data', 'refs']) {
    let names: string[];
    try {
      names = readdirSync(join(root, top), { recursive: true, encoding: 'utf8' });
    } catch {
      continue;
    }
    for (const name of names) {
      const st = statSync(join(root, top, name), { throwIfNoEntry: false });
      if (st?.isFile()) {
        files++;
        total += st.size;
      }
    }
  }
  return { files, bytes: total };
}

function seed(s: StoreDir, db: string): void {
  const path = s.file(`${db}.db`);
  const d = openDatabase(path);
  d.pragma('journal_mode = WAL');
  d.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)');
  const ins = d.prepare('INSERT INTO t(v) VALUES (randomblob(3000))');
  d.exec('BEGIN');
  for (let i = 0; i < 3000; i++) ins.run();
  d.exec('COMMIT');
  d.pragma('wal_checkpoint(TRUNCATE)');
  d.close();
  for (const args of [
    ['create', db, '--from', path],
    ['checkout', db],
    ['checkpoint', db, 'seeded'],
  ]) {
    const r = s.cli(args);
    if (r.code !== 0) throw new Error(`offshoot ${args.join(' ')}: ${r.stderr}`);
  }
}

interface Fanout {
  form: string;
  totalMs: number;
  files: number;
  bytes: number;
}

async function measure(
  s: StoreDir,
  form: string,
  db: string,
  run: (names: string[]) => Promise<void>,
): Promise<Fanout> {
  seed(s, db);
  const names = Array.from({ length: FORKS }, (_, i) => `f-${i}`);
  const before = storeUsage(s.store);
  const t0 = performance.now();
  await run(names);
  const totalMs = performance.now() - t0;
  const after = storeUsage(s.store);
  return { form, totalMs, files: after.files - before.files, bytes: after.bytes - before.bytes };
}

/** 1,000 forks of one checkpoint through one daemon: one at a time, concurrently, and as one batch request. */
export async function fanoutBench(): Promise<void> {
  const s = makeStoreDir();
  const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const loadBefore = load();
  const d = await startDaemon(s, [], {}, s.file('d.sock'));
  const clients: Client[] = [];
  try {
    for (let i = 0; i < CONNECTIONS; i++) clients.push(await connect(d.sock));
    const one = clients[0] as Client;
    const rows: Fanout[] = [];
    rows.push(
      await measure(s, 'one at a time (baseline)', 'serial', async (names) => {
        for (const n of names) await one.fork('serial', 'main', n, { from: 'seeded', ttl: '1h' });
      }),
    );
    rows.push(
      await measure(s, `concurrent, ${CONNECTIONS} connections`, 'concurrent', async (names) => {
        let next = 0;
        await Promise.all(
          clients.map(async (c) => {
            while (next < names.length) {
              const n = names[next++] as string;
              await c.fork('concurrent', 'main', n, { from: 'seeded', ttl: '1h' });
            }
          }),
        );
      }),
    );
    rows.push(
      await measure(s, 'one batch request (names)', 'batch', async (names) => {
        await one.fork('batch', 'main', names, { from: 'seeded', ttl: '1h' });
      }),
    );
    const base = rows[0]?.totalMs ?? Number.NaN;
    printTable(
      `fan-out: ${FORKS} forks of one checkpoint through one daemon (goal ≤ ${GOAL_TOTAL_MS} ms in total, ≤ ${GOAL_BYTES_PER_FORK} B of new objects per fork); load ${loadBefore} before, ${load()} after`,
      ['form', 'total', 'per fork', 'vs one at a time', 'new objects per fork'],
      rows.map((r) => [
        r.form,
        ms(r.totalMs),
        ms(r.totalMs / FORKS),
        `${(r.totalMs / base).toFixed(2)}×`,
        `${(r.files / FORKS).toFixed(2)} files, ${bytes(r.bytes / FORKS)}`,
      ]),
    );
  } finally {
    for (const c of clients) await c.close();
    await d.stop();
    s.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await fanoutBench();
