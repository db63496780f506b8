import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { applyChain } from '../src/ltx/apply.js';
import { foldPage, lockPgno, pageChecksum } from '../src/ltx/checksum.js';
import { openLtxFile } from '../src/ltx/decoder.js';
import { encodeSegment, encodeSnapshotFromDb } from '../src/ltx/encoder.js';
import { bytes, ms, printTable, timeAndCpuMedian, timeMedian } from './measure.js';

const MiB = 1 << 20;
const DB_BYTES = 64 * MiB;
const RUNS = 5;
const SEGMENTS = 10;
const PAGES_PER_SEGMENT = 200;

/** A ~64 MiB database of half compressible text, half random blobs: a realistic mix for LZ4. */
function buildDatabase(path: string): void {
  const db = openDatabase(path);
  db.pragma('journal_mode = DELETE');
  db.exec('CREATE TABLE docs(id INTEGER PRIMARY KEY, body BLOB)');
  const text = db.prepare('INSERT INTO docs(body) VALUES (?)');
  const noise = db.prepare('INSERT INTO docs(body) VALUES (randomblob(3000))');
  const prose = Buffer.from('branchable sqlite for agents; '.repeat(100).slice(0, 3000));
  db.exec('BEGIN');
  for (let i = 0; i < DB_BYTES / 4096; i++) {
    if (i % 2 === 0) text.run(prose);
    else noise.run();
  }
  db.exec('COMMIT');
  db.close();
}

/**
 * Segments that each rewrite a spread of existing pages with fresh bytes, with checksums kept exact so the
 * chain verifies end to end (apply does not need the pages to be valid b-tree pages).
 */
async function buildSegments(
  dbPath: string,
  snapshotChecksum: bigint,
  pageSize: number,
  commit: number,
  dir: string,
): Promise<string[]> {
  const fh = await open(dbPath, 'r');
  const current = new Map<number, Buffer>();
  const files: string[] = [];
  let checksum = snapshotChecksum;
  const lock = lockPgno(pageSize);
  try {
    for (let s = 0; s < SEGMENTS; s++) {
      const preApplyChecksum = checksum;
      const pages: Array<[number, Buffer]> = [];
      for (let k = 0; k < PAGES_PER_SEGMENT; k++) {
        const pgno = 2 + ((k * 7919 + s * 104729) % (commit - 1));
        if (pgno === lock || pages.some(([p]) => p === pgno)) continue;
        let old = current.get(pgno);
        if (old === undefined) {
          old = Buffer.alloc(pageSize);
          await fh.read(old, 0, pageSize, (pgno - 1) * pageSize);
        }
        const fresh = Buffer.alloc(pageSize, (s * 31 + k) & 0xff);
        fresh.writeUInt32BE(pgno, 0);
        checksum = foldPage(foldPage(checksum, pageChecksum(pgno, old)), pageChecksum(pgno, fresh));
        current.set(pgno, fresh);
        pages.push([pgno, fresh]);
      }
      pages.sort((a, b) => a[0] - b[0]);
      const file = join(dir, `segment-${s + 2}.ltx`);
      await encodeSegment(file, {
        pageSize,
        commit,
        txid: s + 2,
        preApplyChecksum,
        postApplyChecksum: checksum,
        pages,
      });
      files.push(file);
    }
  } finally {
    await fh.close();
  }
  return files;
}

/** Prints LTX encode and decode throughput (median of 5) on a ~64 MiB database, and the time to apply a chain. */
export async function ltxBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-bench-'));
  try {
    const db = join(dir, 'bench.db');
    buildDatabase(db);
    const dbSize = statSync(db).size;
    const snap = join(dir, 'snapshot.ltx');
    let encoded = { postApplyChecksum: 0n, pageSize: 0, commit: 0, size: 0 };
    const encodeMs = await timeMedian(RUNS, async () => {
      encoded = await encodeSnapshotFromDb(db, snap, { txid: 1 });
    });
    const decode = await timeAndCpuMedian(RUNS, async () => {
      const dec = openLtxFile(snap, { transientPages: true });
      for await (const _page of dec.pages()) {
        // Decoding (with every checksum verified) is the work measured; the pages themselves are dropped.
      }
      dec.trailer();
    });
    const segments = await buildSegments(db, encoded.postApplyChecksum, encoded.pageSize, encoded.commit, dir);
    const members = [snap, ...segments].map((f) => async () => createReadStream(f, { highWaterMark: MiB }));
    const apply = await timeAndCpuMedian(RUNS, () => applyChain(members, join(dir, 'restored.db')));
    const rate = (t: number): string => `${(dbSize / MiB / (t / 1000)).toFixed(1)} MB/s`;
    printTable(
      'ltx (medians of 5; CPU = user + system time of the process, i.e. per core)',
      ['operation', 'input', 'median', 'throughput', 'CPU', 'per CPU second'],
      [
        ['encode snapshot', bytes(dbSize), ms(encodeMs), rate(encodeMs), '', ''],
        [
          'decode + verify snapshot',
          `${bytes(encoded.size)} ltx`,
          ms(decode.wall),
          rate(decode.wall),
          ms(decode.cpu),
          rate(decode.cpu),
        ],
        [
          `apply chain (snapshot + ${SEGMENTS} segments, fsync)`,
          bytes(dbSize),
          ms(apply.wall),
          rate(apply.wall),
          ms(apply.cpu),
          rate(apply.cpu),
        ],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await ltxBench();
