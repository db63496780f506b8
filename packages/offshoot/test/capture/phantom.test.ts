import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { walChecksum } from '../../src/sqlite/wal-checksum.js';
import { parseWalHeader } from '../../src/sqlite/wal-header.js';
import { readWalIndexHeader, sameGeneration } from '../../src/capture/wal-index.js';
import { converge, fixture } from './capture-fixture.js';

const HOUR = 3_600_000;

// The table's leaf page (page 2) as it would be after inserting row into a copy of the live database, and the
// database's size in pages. The copy is made by a child process: a descriptor on the live file opened and closed
// by this one would drop the live connection's locks.
function phantomLeaf(dbPath: string, row: string, pageSize: number): { page: Buffer; pages: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-phantom-'));
  try {
    const copyPath = path.join(dir, 'copy.db');
    execFileSync('cp', [dbPath, copyPath]);
    if (fs.existsSync(`${dbPath}-wal`)) execFileSync('cp', [`${dbPath}-wal`, `${copyPath}-wal`]);
    const copy = openDatabase(copyPath);
    copy.pragma('journal_mode = DELETE');
    const pages = Number(copy.pragma('page_count', { simple: true }));
    copy.prepare('INSERT INTO t(body) VALUES (?)').run(Buffer.from(row));
    copy.close();
    const page = Buffer.alloc(pageSize);
    const fd = fs.openSync(copyPath, 'r');
    fs.readSync(fd, page, 0, pageSize, pageSize);
    fs.closeSync(fd);
    return { page, pages };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// A checksum-chained frame for page 2 that commits a database of `pages` pages.
function commitFrame(
  page: Buffer,
  pages: number,
  salts: { salt1: number; salt2: number },
  bigEndian: boolean,
  seed: [number, number],
): Buffer {
  const frame = Buffer.alloc(24 + page.length);
  frame.writeUInt32BE(2, 0);
  frame.writeUInt32BE(pages, 4);
  frame.writeUInt32BE(salts.salt1, 8);
  frame.writeUInt32BE(salts.salt2, 12);
  page.copy(frame, 24);
  let [s1, s2] = walChecksum(frame.subarray(0, 8), bigEndian, seed[0], seed[1]);
  [s1, s2] = walChecksum(frame.subarray(24), bigEndian, s1, s2);
  frame.writeUInt32BE(s1, 16);
  frame.writeUInt32BE(s2, 20);
  return frame;
}

// Appends to the -wal what a writer SIGKILLed between writing its frames and publishing them in the wal-index
// leaves behind: a complete, checksum-valid commit frame that SQLite never committed. Its page 2 is the table's
// leaf as it would be after inserting `row` into a copy of the database.
function appendPhantomCommit(dbPath: string, row: string): void {
  const walPath = `${dbPath}-wal`;
  const wal = fs.readFileSync(walPath);
  const header = parseWalHeader(wal);
  assert.ok(header);
  const frameSize = 24 + header.pageSize;
  const last = 32 + (Math.floor((wal.length - 32) / frameSize) - 1) * frameSize;
  const { page, pages } = phantomLeaf(dbPath, row, header.pageSize);
  const frame = commitFrame(page, pages, header, header.bigEndianChecksum, [
    wal.readUInt32BE(last + 16),
    wal.readUInt32BE(last + 20),
  ]);
  fs.appendFileSync(walPath, frame);
}

test("a killed writer's published-but-uncommitted frames are never applied, even when the next writer overwrites them with a same-size commit", async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    f.insert(1, 10);
    await engine.drainNow();
    appendPhantomCommit(f.db, 'phantom');
    const withPhantom = fs.statSync(`${f.db}-wal`).size;
    await engine.drainNow();
    const applies = f.sink.applies;
    assert.equal(applies, 1, 'the phantom commit was not applied');
    const count = f.writer.prepare('SELECT count(*) AS n FROM t WHERE body = ?');
    assert.deepEqual(count.get(Buffer.from('phantom')), { n: 0 }, 'SQLite never committed the phantom');
    f.writer.prepare('INSERT INTO t(body) VALUES (?)').run(Buffer.from('genuine'));
    await engine.drainNow();
    assert.deepEqual(count.get(Buffer.from('genuine')), { n: 1 });
    assert.equal(fs.statSync(`${f.db}-wal`).size, withPhantom, "the genuine one-frame commit took the phantom's place");
    assert.equal(f.sink.applies, applies + 1, 'the genuine commit that overwrote the phantom is applied');
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test('a phantom first transaction of a fresh WAL generation is not applied either', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    assert.equal(fs.statSync(`${f.db}-wal`).size, 0, 'the startup rebase left an empty -wal');
    // A killed writer got as far as the -wal header and its commit frame, with the salts the wal-index holds.
    const index = readWalIndexHeader(`${f.db}-shm`);
    assert.ok(index);
    const pageSize = Number(f.writer.pragma('page_size', { simple: true }));
    const header = Buffer.alloc(32);
    header.writeUInt32BE(0x377f0682, 0);
    header.writeUInt32BE(3007000, 4);
    header.writeUInt32BE(pageSize, 8);
    header.writeUInt32BE(index.salt1, 16);
    header.writeUInt32BE(index.salt2, 20);
    const seed = walChecksum(header.subarray(0, 24), false, 0, 0);
    header.writeUInt32BE(seed[0], 24);
    header.writeUInt32BE(seed[1], 28);
    const { page, pages } = phantomLeaf(f.db, 'phantom', pageSize);
    fs.writeFileSync(`${f.db}-wal`, Buffer.concat([header, commitFrame(page, pages, index, false, seed)]));
    await engine.drainNow();
    assert.equal(f.sink.applies, 0, 'the phantom commit was not applied');
    f.writer.prepare('INSERT INTO t(body) VALUES (?)').run(Buffer.from('genuine'));
    await engine.drainNow();
    assert.equal(f.sink.applies, 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});

test('a fresh -wal header the wal-index does not vouch for yet never binds the reader', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: HOUR });
    await engine.start();
    const walPath = `${f.db}-wal`;
    const shmPath = `${f.db}-shm`;
    assert.equal(fs.statSync(walPath).size, 0);
    // A writer's first commit after TRUNCATE picks fresh random salts and writes the -wal header before the index
    // learns them. Here that header comes first, then its commit frame, and the index only learns of both later.
    const pageSize = Number(f.writer.pragma('page_size', { simple: true }));
    const salts = { salt1: 0x5a175a17, salt2: 0x00c0ffee };
    const header = Buffer.alloc(32);
    header.writeUInt32BE(0x377f0682, 0);
    header.writeUInt32BE(3007000, 4);
    header.writeUInt32BE(pageSize, 8);
    header.writeUInt32BE(salts.salt1, 16);
    header.writeUInt32BE(salts.salt2, 20);
    const seed = walChecksum(header.subarray(0, 24), false, 0, 0);
    header.writeUInt32BE(seed[0], 24);
    header.writeUInt32BE(seed[1], 28);
    fs.writeFileSync(walPath, header);
    await engine.drainNow();
    const { page, pages } = phantomLeaf(f.db, 'recovered', pageSize);
    fs.appendFileSync(walPath, commitFrame(page, pages, salts, false, seed));
    await engine.drainNow();
    assert.equal(f.sink.applies, 0, 'not committed yet');
    // Make the index header copies disagree, so the next reader rebuilds the index from the -wal (SQLite's
    // recovery), which commits the frame. The descriptor is never closed: closing any descriptor on -shm would
    // drop this process's SQLite locks on it.
    const shm = fs.openSync(shmPath, 'r+');
    const iChange = Buffer.alloc(4);
    fs.readSync(shm, iChange, 0, 4, 8);
    iChange.writeUInt32LE((iChange.readUInt32LE(0) + 1) >>> 0, 0);
    fs.writeSync(shm, iChange, 0, 4, 8);
    const count = f.writer.prepare('SELECT count(*) AS n FROM t WHERE body = ?');
    assert.deepEqual(count.get(Buffer.from('recovered')), { n: 1 }, 'recovery committed the frame');
    assert.ok(sameGeneration(readWalIndexHeader(shmPath), salts));
    await engine.drainNow();
    assert.equal(f.sink.applies, 1);
    await converge(engine, f);
  } finally {
    await f.cleanup();
  }
});
