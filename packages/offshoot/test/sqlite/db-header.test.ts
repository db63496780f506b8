import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { hasCode } from '../../src/core/errors.js';
import { DB_HEADER_SIZE, isWalMode, parseDbHeader } from '../../src/sqlite/db-header.js';

const VECTOR_DIR = fileURLToPath(new URL('../vectors/wal/', import.meta.url));
const vector = (name: string): Buffer => fs.readFileSync(path.join(VECTOR_DIR, name));

function withTempDir(fn: (dir: string) => void): () => void {
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    try {
      fn(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

const isCorrupt = (err: unknown): boolean =>
  hasCode(err, 'CORRUPT') && typeof err.hint === 'string' && err.hint.length > 0;

test('the vector databases parse: page size, WAL mode, counters and the writing library version', () => {
  assert.equal(DB_HEADER_SIZE, 100);
  const base = parseDbHeader(vector('a-base.db'));
  assert.deepEqual(
    [base.pageSize, base.writeVersion, base.readVersion, base.changeCounter, base.pageCount, base.versionValidFor],
    [512, 2, 2, 1, 1, 1],
  );
  assert.equal(isWalMode(base), true);
  assert.equal(base.textEncoding, 0, 'no schema yet, so no encoding recorded');
  assert.equal(base.sqliteVersion, 3040001);
  const final = parseDbHeader(vector('a-final.db'));
  assert.deepEqual(
    [
      final.pageCount,
      final.changeCounter,
      final.schemaCookie,
      final.schemaFormat,
      final.textEncoding,
      final.reservedBytes,
    ],
    [2, 2, 1, 4, 1, 0],
  );
  assert.equal(final.pageCount * final.pageSize, vector('a-final.db').length);
});

test('parses from a view that does not start at the beginning of its buffer', () => {
  const backing = Buffer.concat([Buffer.alloc(7), vector('a-final.db')]);
  assert.equal(parseDbHeader(backing.subarray(7)).pageCount, 2);
});

test(
  'fields agree with the PRAGMAs SQLite reports, in rollback and WAL mode',
  withTempDir((dir) => {
    for (const [pageSize, mode] of [
      [4096, 'delete'],
      [65536, 'wal'],
      [1024, 'wal'],
    ] as const) {
      const file = path.join(dir, `p${pageSize}-${mode}.db`);
      const db = openDatabase(file);
      db.pragma(`page_size = ${pageSize}`);
      db.pragma(`journal_mode = ${mode}`);
      db.pragma('user_version = -7');
      db.pragma('application_id = 1330007124');
      db.exec(
        `CREATE TABLE t(x); CREATE TABLE u(y); INSERT INTO t VALUES (randomblob(${pageSize * 4})); DELETE FROM t;`,
      );
      if (mode === 'wal') db.pragma('wal_checkpoint(TRUNCATE)');
      const want = {
        pageSize: db.pragma('page_size', { simple: true }),
        pageCount: db.pragma('page_count', { simple: true }),
        freelistCount: db.pragma('freelist_count', { simple: true }),
        schemaCookie: db.pragma('schema_version', { simple: true }),
        userVersion: db.pragma('user_version', { simple: true }),
        applicationId: db.pragma('application_id', { simple: true }),
      };
      // The connection is closed before the file is read: a raw open/close of the main database in a process
      // with a live connection would drop that connection's locks.
      db.close();
      const h = parseDbHeader(fs.readFileSync(file).subarray(0, DB_HEADER_SIZE));
      assert.deepEqual(
        {
          pageSize: h.pageSize,
          pageCount: h.pageCount,
          freelistCount: h.freelistCount,
          schemaCookie: h.schemaCookie,
          userVersion: h.userVersion,
          applicationId: h.applicationId,
        },
        want,
        `${pageSize} ${mode}`,
      );
      assert.ok(h.freelistCount > 0 && h.freelistTrunk > 0, 'the DELETE left free pages');
      assert.equal(h.textEncoding, 1);
      assert.equal(h.versionValidFor, h.changeCounter);
      assert.equal(isWalMode(h), mode === 'wal', `${pageSize} ${mode}`);
      assert.deepEqual([h.writeVersion, h.readVersion], mode === 'wal' ? [2, 2] : [1, 1]);
    }
  }),
);

test('the on-disk page size 1 means 65536', () => {
  const bytes = Buffer.from(vector('a-base.db').subarray(0, DB_HEADER_SIZE));
  bytes.writeUInt16BE(1, 16);
  assert.equal(parseDbHeader(bytes).pageSize, 65536);
});

test('anything that is not an SQLite 3 header is a typed CORRUPT error', () => {
  const good = vector('a-base.db');
  assert.throws(() => parseDbHeader(Buffer.from('this is a text file, not a database\n'.repeat(5))), isCorrupt);
  assert.throws(() => parseDbHeader(new Uint8Array(0)), isCorrupt);
  assert.throws(() => parseDbHeader(good.subarray(0, 99)), isCorrupt);
  assert.throws(() => parseDbHeader(new Uint8Array(100)), isCorrupt);
  const badMagic = Buffer.from(good);
  badMagic[15] = 0x20;
  assert.throws(() => parseDbHeader(badMagic), isCorrupt);
  for (const raw of [0, 2, 256, 1000, 4097, 0xffff]) {
    const bytes = Buffer.from(good);
    bytes.writeUInt16BE(raw, 16);
    assert.throws(() => parseDbHeader(bytes), isCorrupt, `page size field ${raw}`);
  }
});

test('isWalMode needs both versions at 2', () => {
  const h = parseDbHeader(vector('a-base.db'));
  assert.equal(isWalMode({ ...h, writeVersion: 1 }), false);
  assert.equal(isWalMode({ ...h, readVersion: 1 }), false);
  assert.equal(isWalMode({ ...h, writeVersion: 1, readVersion: 1 }), false);
});
