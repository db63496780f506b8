import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyChain } from '../../src/ltx/apply.js';
import { databaseChecksum } from '../../src/ltx/checksum.js';
import { openLtxFile } from '../../src/ltx/decoder.js';
import { encodeSnapshotFromDb } from '../../src/ltx/encoder.js';
import { makeDb } from './sqlite-files.js';

const MiB = 1 << 20;
const DB_BYTES = 256 * MiB;

/** Tracks the peak resident set size while `fn` runs, sampling on a timer and at explicit checkpoints. */
async function peakRss<T>(fn: (sample: () => void) => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const sample = (): void => {
    peak = Math.max(peak, process.memoryUsage.rss());
  };
  const timer = setInterval(sample, 10);
  try {
    const result = await fn(sample);
    sample();
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

test('a 256 MB database encodes and decodes with bounded memory', { timeout: 300_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const db = path.join(dir, 'big.db');
    makeDb(db, 4096, (d) => {
      d.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB)');
      const text = d.prepare('INSERT INTO t(body) VALUES (?)');
      const noise = d.prepare('INSERT INTO t(body) VALUES (randomblob(?))');
      const prose = Buffer.from('offshoot streams pages; '.repeat(6000).slice(0, 128 * 1024));
      d.exec('BEGIN');
      for (let i = 0; i < DB_BYTES / (128 * 1024); i++) {
        if (i % 2 === 0) text.run(prose);
        else noise.run(128 * 1024);
      }
      d.exec('COMMIT');
    });
    const dbSize = fs.statSync(db).size;
    assert.ok(dbSize >= DB_BYTES, `database is ${dbSize} bytes`);
    const base = process.memoryUsage.rss();
    const ltx = path.join(dir, 'big.ltx');

    const enc = await peakRss(() => encodeSnapshotFromDb(db, ltx, { txid: 1 }));
    assert.equal(enc.result.commit, dbSize / 4096);

    const dec = await peakRss(async (sample) => {
      const d = openLtxFile(ltx);
      let n = 0;
      for await (const p of d.pages()) {
        if (++n % 4096 === 0) sample();
        assert.equal(p.data.length, 4096);
      }
      return { n, post: d.trailer().postApplyChecksum };
    });
    assert.equal(dec.result.n, dbSize / 4096);

    const restored = path.join(dir, 'restored.db');
    const apply = await peakRss(() => applyChain([async () => fs.createReadStream(ltx)], restored));
    assert.equal(apply.result.checksum, enc.result.postApplyChecksum);
    assert.equal(dec.result.post, enc.result.postApplyChecksum);
    assert.equal((await databaseChecksum(restored)).checksum, enc.result.postApplyChecksum);
    assert.equal(fs.statSync(restored).size, dbSize);

    const growth = Math.max(enc.peak, dec.peak, apply.peak) - base;
    console.log(
      `rss growth: encode ${((enc.peak - base) / MiB).toFixed(1)} MiB, decode ${((dec.peak - base) / MiB).toFixed(1)} MiB, apply ${((apply.peak - base) / MiB).toFixed(1)} MiB for a ${(dbSize / MiB).toFixed(0)} MiB database`,
    );
    // Measured 77-132 MiB since decode reads 4 MiB chunks into page slabs (RSS also holds heap the GC has not
    // returned yet, more of it on a loaded machine); a copy of the database in memory would be 257 MiB and more.
    assert.ok(growth < dbSize * 0.75, `RSS grew by ${(growth / MiB).toFixed(1)} MiB`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
