import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import type { SqliteDatabase } from '../../src/sqlite/sqlite-database.js';
import { walChecksum } from '../../src/sqlite/wal-checksum.js';
import { parseWalHeader } from '../../src/sqlite/wal-header.js';
import { WalReader, isWalRestarted, type WalTransaction } from '../../src/sqlite/wal-reader.js';

// Only the -wal is read with raw fds here: SQLite takes no fcntl locks on it. Opening and closing the main
// database file from this process would silently drop the locks of the live connection.

interface LiveDb {
  db: SqliteDatabase;
  walPath: string;
  dbPath: string;
  pageSize: number;
}

function withLiveDb(fn: (live: LiveDb) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    const dbPath = path.join(dir, 'live.db');
    const db = openDatabase(dbPath);
    try {
      assert.equal(db.pragma('journal_mode = WAL', { simple: true }), 'wal');
      db.pragma('wal_autocheckpoint = 0');
      db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB)');
      await fn({ db, dbPath, walPath: `${dbPath}-wal`, pageSize: db.pragma('page_size', { simple: true }) as number });
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

async function drain(r: WalReader): Promise<WalTransaction[]> {
  const out: WalTransaction[] = [];
  for (let t = await r.next(); t; t = await r.next()) out.push(t);
  return out;
}

function apply(image: Buffer, t: WalTransaction, pageSize: number): Buffer {
  const next = Buffer.alloc(t.commitSize * pageSize);
  image.copy(next, 0, 0, Math.min(image.length, next.length));
  for (const f of t.frames) f.data.copy(next, (f.pgno - 1) * pageSize);
  return next;
}

test(
  'five inserts with autocheckpoint off are five transactions, each ending in a commit frame',
  withLiveDb(async ({ db, dbPath, walPath, pageSize }) => {
    db.pragma('wal_checkpoint(TRUNCATE)');
    assert.equal(fs.statSync(walPath).size, 0);
    // With the -wal empty the main file is SQLite's view of the database; a child process reads it, since a
    // descriptor on it opened and closed here would drop the live connection's locks.
    let image: Buffer = execFileSync('cat', [dbPath]);
    const r = new WalReader(walPath, pageSize);
    assert.equal(await r.next(), undefined);
    const insert = db.prepare('INSERT INTO t(body) VALUES (?)');
    const frameSize = 24 + pageSize;
    for (let i = 0; i < 5; i++) {
      const before = r.offset === 0 ? 32 : r.offset;
      insert.run(Buffer.alloc(300 + i * 1500, i + 1));
      const t = await r.next();
      assert.ok(t, `insert ${i} is visible`);
      assert.equal(t.endOffset, fs.statSync(walPath).size);
      assert.equal(t.endOffset, before + t.frames.length * frameSize);
      const raw = fs.readFileSync(walPath);
      t.frames.forEach((_, k) => {
        const commit = raw.readUInt32BE(before + k * frameSize + 4);
        if (k === t.frames.length - 1) assert.equal(commit, t.commitSize);
        else assert.equal(commit, 0);
      });
      assert.equal(await r.next(), undefined);
      image = apply(image, t, pageSize);
    }
    assert.equal(r.framesRead, (r.offset - 32) / frameSize);
    db.pragma('wal_checkpoint(TRUNCATE)');
    assert.ok(image.equals(execFileSync('cat', [dbPath])), 'replaying the frames reproduces what SQLite checkpoints');
  }),
);

test(
  'RESTART is lazy: nothing changes until the next commit, which a bound reader reports as a restart',
  withLiveDb(async ({ db, walPath, pageSize }) => {
    const insert = db.prepare('INSERT INTO t(body) VALUES (?)');
    for (let i = 0; i < 3; i++) insert.run(Buffer.alloc(100, i));
    const r = new WalReader(walPath, pageSize);
    assert.equal((await drain(r)).length, 4);
    const [result] = db.pragma('wal_checkpoint(RESTART)') as Array<{ busy: number; log: number; checkpointed: number }>;
    assert.deepEqual(result, { busy: 0, log: r.framesRead, checkpointed: r.framesRead });
    const oldBytes = fs.readFileSync(walPath);
    const old = parseWalHeader(oldBytes);
    assert.ok(old);
    assert.equal(await r.next(), undefined);
    assert.ok(
      fs.readFileSync(walPath).subarray(0, 32).equals(oldBytes.subarray(0, 32)),
      'header untouched before the next commit',
    );

    insert.run(Buffer.alloc(100, 9));
    await assert.rejects(r.next(), (err) => isWalRestarted(err));
    const raw = fs.readFileSync(walPath);
    const now = parseWalHeader(raw);
    assert.ok(now);
    assert.equal(now.checkpointSeq, old.checkpointSeq + 1);
    assert.equal(now.salt1, (old.salt1 + 1) >>> 0);
    assert.equal(raw.length, oldBytes.length, 'the file is not shrunk');

    const fresh = new WalReader(walPath, pageSize);
    const txns = await drain(fresh);
    assert.equal(txns.length, 1);
    assert.deepEqual([fresh.header?.checksum1, fresh.header?.checksum2], [now.checksum1, now.checksum2]);
    const first = raw.subarray(32, 32 + 24 + pageSize);
    const seeded = walChecksum(
      first.subarray(24),
      now.bigEndianChecksum,
      ...walChecksum(first.subarray(0, 8), now.bigEndianChecksum, now.checksum1, now.checksum2),
    );
    assert.deepEqual(
      seeded,
      [first.readUInt32BE(16), first.readUInt32BE(20)],
      'frame 1 chains from the header checksum',
    );
    assert.equal(fresh.offset, 32 + txns.flatMap((t) => t.frames).length * (24 + pageSize));
    assert.ok(fresh.offset < raw.length, 'stale frames of the old generation remain behind the valid end');
  }),
);

const cli = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' });

test(
  'commits by a foreign sqlite3 process are read while this process keeps the WAL alive',
  { skip: cli.status !== 0 && 'the sqlite3 CLI is not on PATH' },
  withLiveDb(async ({ db, dbPath, walPath, pageSize }) => {
    const r = new WalReader(walPath, pageSize);
    await drain(r);
    const run = spawnSync(
      'sqlite3',
      [
        dbPath,
        "INSERT INTO t(body) VALUES (x'01'); INSERT INTO t(body) VALUES (x'02'); INSERT INTO t(body) VALUES (x'03');",
      ],
      { encoding: 'utf8' },
    );
    assert.equal(run.status, 0, run.stderr);
    const txns = await drain(r);
    assert.equal(txns.length, 3);
    const row = db.prepare('SELECT count(*) AS n FROM t').get() as { n: number };
    assert.equal(row.n, 3, 'this connection sees the foreign rows');
  }),
);
