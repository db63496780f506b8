import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openLocalBackend } from '../src/store/local/local-backend.js';
import { median, ms, printTable } from './measure.js';

/** Conditional puts per run, one after another on one key, as a session's lease and close's ref write them. */
const PUTS = Number(process.env.OFFSHOOT_BENCH_CAS_PUTS ?? 500);
/** The store's parent directory: put it on the filesystem to measure (fsync costs differ by filesystem). */
const DIR = process.env.OFFSHOOT_BENCH_CAS_DIR ?? tmpdir();

/** Times a local ref's compare-and-swap (put with ifMatch), each on the version the one before wrote. */
async function main(): Promise<void> {
  const dir = mkdtempSync(join(DIR, 'offshoot-cas-'));
  try {
    const b = await openLocalBackend(join(dir, 'store'));
    const body = (i: number) => Buffer.from(JSON.stringify({ holder: 'bench', expires: 1e12 + i, n: i }));
    let etag = await b.put('refs/db/main', body(0));
    const times: number[] = [];
    const t0 = performance.now();
    for (let i = 1; i <= PUTS; i++) {
      const t = performance.now();
      etag = await b.put('refs/db/main', body(i), { ifMatch: etag });
      times.push(performance.now() - t);
    }
    const total = performance.now() - t0;
    times.sort((a, b) => a - b);
    const p90 = times[Math.floor(times.length * 0.9)] as number;
    printTable(
      `${PUTS} conditional puts on one key`,
      ['median', 'p90', 'total'],
      [[ms(median(times)), ms(p90), ms(total)]],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
