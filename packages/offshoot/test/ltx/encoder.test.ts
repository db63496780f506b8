import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasCode, type ErrorCode } from '../../src/core/errors.js';
import { applyChain, applySegments } from '../../src/ltx/apply.js';
import { CHECKSUM_FLAG, EMPTY_DB_CHECKSUM, databaseChecksum, pageChecksum } from '../../src/ltx/checksum.js';
import { decodeFile } from '../../src/ltx/decoder.js';
import { LtxEncoder, encodeSegment, encodeSnapshotFromDb } from '../../src/ltx/encoder.js';
import type { SqliteDatabase } from '../../src/sqlite/sqlite-database.js';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import type { LtxHeader } from '../../src/ltx/header.js';
import { changeDb, makeDb, pageDiff } from './sqlite-files.js';
import { VECTOR_DIR, VECTORS, hex, vectorBytes } from './vector-files.js';

const TS = 1700000000000;

function withTmp(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    try {
      await fn(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

const fileOpener = (file: string) => async () => fs.createReadStream(file);
const isCode = (code: ErrorCode) => (e: unknown) => hasCode(e, code);

function header(over: Partial<LtxHeader>): LtxHeader {
  return {
    flags: 0,
    pageSize: 512,
    commit: 3,
    minTxid: 1,
    maxTxid: 1,
    timestamp: TS,
    preApplyChecksum: 0n,
    walOffset: 0,
    walSize: 0,
    walSalt1: 0,
    walSalt2: 0,
    nodeId: 0,
    ...over,
  };
}

const expectedDbs: Array<[string, string, number]> = [
  ['snapshot-1page-ps4096.db', 'snapshot-1page-ps4096.ltx', 1],
  ['snapshot-ps512-incompressible.db', 'snapshot-ps512-incompressible.ltx', 7],
  ['chain-1.db', 'chain-1-snapshot.ltx', 1],
  ['chain-2.db', 'chain-2-segment-grow.ltx', 2],
  ['chain-3.db', 'chain-3-segment-shrink.ltx', 3],
];

for (const [db, ltx, txid] of expectedDbs) {
  test(
    `our snapshot of ${db} decodes to its pages and the recorded checksums`,
    withTmp(async (dir) => {
      const out = path.join(dir, 'snap.ltx');
      const facts = VECTORS.files[ltx]!;
      const r = await encodeSnapshotFromDb(path.join(VECTOR_DIR, db), out, { txid, timestamp: TS });
      assert.equal(hex(r.postApplyChecksum), facts.post_apply_checksum);
      assert.equal(r.pageSize, facts.page_size);
      assert.equal(r.commit, facts.commit);
      assert.equal(r.size, fs.statSync(out).size);
      const decoded = await decodeFile(out);
      assert.equal(hex(decoded.trailer.postApplyChecksum), facts.post_apply_checksum);
      const src = vectorBytes(db);
      assert.deepEqual(Buffer.concat(decoded.pages.map((p) => p.data)), src);
      const ourChecksums = new Map(decoded.pages.map((p) => [p.pgno, hex(pageChecksum(p.pgno, p.data))]));
      for (const p of facts.pages) assert.equal(ourChecksums.get(p.pgno), p.page_checksum, `page ${p.pgno} checksum`);
      if (facts.is_snapshot) {
        assert.equal(decoded.pages.length, facts.pages.length);
        assert.deepEqual(
          fs.readFileSync(out).subarray(0, 100),
          vectorBytes(ltx).subarray(0, 100),
          'same header bytes as ltx v0.5.1',
        );
        const ours = fs.readFileSync(out);
        assert.deepEqual(
          decoded.pages.map((p) => ours.readUInt32LE(p.offset + 6 + 7) >= 0x80000000),
          facts.pages.map((p) => p.lz4_block_stored_uncompressed),
          'incompressible pages are stored raw, like ltx v0.5.1 does',
        );
      }
    }),
  );
}

test(
  'real SQLite databases of several page sizes round-trip byte for byte',
  withTmp(async (dir) => {
    for (const pageSize of [512, 1024, 4096, 8192, 65536]) {
      const src = path.join(dir, `src-${pageSize}.db`);
      makeDb(src, pageSize, (db) => {
        db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, blob BLOB); CREATE INDEX t_name ON t(name)');
        const ins = db.prepare('INSERT INTO t(name, blob) VALUES (?, randomblob(?))');
        db.exec('BEGIN');
        for (let i = 0; i < 400; i++) ins.run(`row-${i}-${'x'.repeat(i % 50)}`, (i * 37) % 3000);
        db.exec('COMMIT');
      });
      const ltx = path.join(dir, `src-${pageSize}.ltx`);
      const r = await encodeSnapshotFromDb(src, ltx, { txid: 5 });
      const want = await databaseChecksum(src);
      assert.equal(r.postApplyChecksum, want.checksum);
      assert.equal(r.pageSize, pageSize);
      assert.equal(r.commit, fs.statSync(src).size / pageSize);
      const dest = path.join(dir, `out-${pageSize}.db`);
      const applied = await applyChain([fileOpener(ltx)], dest);
      assert.deepEqual(fs.readFileSync(dest), fs.readFileSync(src));
      assert.deepEqual(applied, { txid: 5, checksum: want.checksum, pageSize, commit: r.commit });
    }
  }),
);

test(
  'segments built from page diffs apply on top of a snapshot (grow, update, shrink)',
  withTmp(async (dir) => {
    const db = path.join(dir, 'live.db');
    makeDb(db, 1024, (d) => {
      d.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
      const ins = d.prepare('INSERT INTO t(v) VALUES (?)');
      for (let i = 0; i < 200; i++) ins.run('a'.repeat(100) + i);
    });
    const snap = path.join(dir, 'snap.ltx');
    const s = await encodeSnapshotFromDb(db, snap, { txid: 1, timestamp: TS });
    const steps: Array<(d: SqliteDatabase) => void> = [
      (d) => d.prepare("UPDATE t SET v = 'changed' || id WHERE id % 7 = 0").run(),
      (d) => {
        const ins = d.prepare('INSERT INTO t(v) VALUES (?)');
        for (let i = 0; i < 300; i++) ins.run('grow'.repeat(60) + i);
      },
      (d) => d.exec('DELETE FROM t WHERE id > 50; VACUUM'),
    ];
    const members = [snap];
    let before = fs.readFileSync(db);
    let checksum = s.postApplyChecksum;
    let txid = 1;
    const copy = path.join(dir, 'copy.db');
    fs.copyFileSync(db, copy);
    for (const step of steps) {
      changeDb(db, step);
      const after = fs.readFileSync(db);
      const post = (await databaseChecksum(db)).checksum;
      txid++;
      const seg = path.join(dir, `seg-${txid}.ltx`);
      await encodeSegment(seg, {
        pageSize: 1024,
        commit: after.length / 1024,
        txid,
        preApplyChecksum: checksum,
        postApplyChecksum: post,
        pages: pageDiff(before, after, 1024),
        timestamp: TS,
      });
      members.push(seg);
      const dest = path.join(dir, `at-${txid}.db`);
      const r = await applyChain(members.map(fileOpener), dest);
      assert.deepEqual(fs.readFileSync(dest), after, `chain up to txid ${txid}`);
      assert.deepEqual(r, { txid, checksum: post, pageSize: 1024, commit: after.length / 1024 });
      const ext = await applySegments(copy, checksum, [fileOpener(seg)], { txid: txid - 1 });
      assert.deepEqual(ext, r);
      assert.deepEqual(fs.readFileSync(copy), after, `in-place extension to txid ${txid}`);
      before = after;
      checksum = post;
    }
    assert.ok(fs.statSync(db).size < 200 * 1024, 'the last step shrank the database');
  }),
);

test(
  'applySegments checks the starting point it is given',
  withTmp(async (dir) => {
    const copy = path.join(dir, 'copy.db');
    fs.copyFileSync(path.join(VECTOR_DIR, 'chain-1.db'), copy);
    const seg2 = fileOpener(path.join(VECTOR_DIR, 'chain-2-segment-grow.ltx'));
    const seg3 = fileOpener(path.join(VECTOR_DIR, 'chain-3-segment-shrink.ltx'));
    await assert.rejects(applySegments(copy, 0x8000000000000001n, [seg2]), isCode('CHECKSUM_MISMATCH'));
    await assert.rejects(applySegments(copy, 0xa8238fba63c6e23an, [seg2], { txid: 5 }), isCode('CORRUPT'));
    assert.deepEqual(fs.readFileSync(copy), vectorBytes('chain-1.db'));
    const r = await applySegments(copy, 0xa8238fba63c6e23an, [seg2, seg3]);
    assert.deepEqual(fs.readFileSync(copy), vectorBytes('chain-3.db'));
    assert.equal(hex(r.checksum), 'cfb18049e6a5a33a');
    assert.equal(r.txid, 3);
    const none = await applySegments(copy, r.checksum, [], { txid: 3 });
    assert.deepEqual(none, r);
  }),
);

test(
  'snapshot and segment encoders refuse what ltx v0.5.1 refuses',
  withTmp(async (dir) => {
    const out = path.join(dir, 'x.ltx');
    const page = Buffer.alloc(512, 1);
    const snap = await LtxEncoder.create(out, header({ commit: 3 }));
    await assert.rejects(snap.writePage(2, page), isCode('INVALID_ARGUMENT'), 'snapshot must start at page 1');
    await snap.writePage(1, page);
    await assert.rejects(snap.writePage(1, page), isCode('INVALID_ARGUMENT'), 'duplicate');
    await assert.rejects(snap.writePage(3, page), isCode('INVALID_ARGUMENT'), 'gap');
    await assert.rejects(snap.writePage(2, page.subarray(1)), isCode('INVALID_ARGUMENT'), 'short page');
    await assert.rejects(snap.writePage(0, page), isCode('INVALID_ARGUMENT'), 'page 0');
    await snap.writePage(2, page);
    await assert.rejects(snap.finish(snap.rollingChecksum), isCode('INVALID_ARGUMENT'), 'incomplete snapshot');
    await snap.writePage(3, page);
    await assert.rejects(snap.writePage(4, page), isCode('INVALID_ARGUMENT'), 'beyond commit');
    await assert.rejects(snap.finish(CHECKSUM_FLAG | 1n), isCode('INVALID_ARGUMENT'), 'wrong post-apply');
    await assert.rejects(snap.finish(0n), isCode('INVALID_ARGUMENT'), 'zero post-apply');
    const done = await snap.finish(snap.rollingChecksum);
    assert.equal(done.size, fs.statSync(out).size);
    assert.equal((await decodeFile(out)).trailer.fileChecksum, done.fileChecksum);
    await assert.rejects(snap.writePage(3, page), isCode('INVALID_ARGUMENT'), 'after finish');

    const seg = await LtxEncoder.create(
      out,
      header({ minTxid: 2, maxTxid: 2, commit: 3000000, preApplyChecksum: CHECKSUM_FLAG | 5n }),
    );
    assert.throws(() => seg.rollingChecksum, isCode('INVALID_ARGUMENT'));
    await seg.writePage(2, page);
    await assert.rejects(seg.writePage(2, page), isCode('INVALID_ARGUMENT'), 'segment duplicate');
    await assert.rejects(seg.writePage(1, page), isCode('INVALID_ARGUMENT'), 'segment descending');
    await assert.rejects(seg.writePage(2097153, page), isCode('INVALID_ARGUMENT'), 'lock page');
    const concurrent = [seg.writePage(5, page), seg.writePage(6, page)];
    const settled = await Promise.allSettled(concurrent);
    assert.equal(settled.filter((s) => s.status === 'rejected').length, 1, 'overlapping calls are refused');
    await seg.abort();
    await seg.abort();
    assert.equal(fs.existsSync(out), false, 'abort removes the partial file');

    await assert.rejects(LtxEncoder.create(out, header({ pageSize: 1000 })), isCode('INVALID_ARGUMENT'));
    await assert.rejects(
      LtxEncoder.create(out, header({ minTxid: 2, maxTxid: 2 })),
      isCode('INVALID_ARGUMENT'),
      'segment with zero pre-apply',
    );
    await assert.rejects(
      LtxEncoder.create(out, header({ preApplyChecksum: CHECKSUM_FLAG })),
      isCode('INVALID_ARGUMENT'),
      'snapshot with pre-apply',
    );
    assert.equal(fs.existsSync(out), false);

    const empty = await LtxEncoder.create(out, header({ commit: 0 }));
    await assert.rejects(
      empty.finish(CHECKSUM_FLAG | 1n),
      isCode('INVALID_ARGUMENT'),
      'empty db needs the empty checksum',
    );
    await empty.finish(EMPTY_DB_CHECKSUM);
    const d = await decodeFile(out);
    assert.deepEqual([d.pages.length, d.trailer.postApplyChecksum], [0, EMPTY_DB_CHECKSUM]);
  }),
);

test(
  'encodeSegment refuses txid 1, unsorted or duplicate pages and zero checksums, leaving nothing',
  withTmp(async (dir) => {
    const out = path.join(dir, 'seg.ltx');
    const page = Buffer.alloc(4096, 2);
    const base = {
      pageSize: 4096,
      commit: 10,
      txid: 2,
      preApplyChecksum: CHECKSUM_FLAG | 1n,
      postApplyChecksum: CHECKSUM_FLAG | 2n,
    };
    const bad: Array<[string, Parameters<typeof encodeSegment>[1]]> = [
      ['txid 1', { ...base, txid: 1, pages: [] }],
      [
        'unsorted',
        {
          ...base,
          pages: [
            [3, page],
            [2, page],
          ],
        },
      ],
      [
        'duplicate',
        {
          ...base,
          pages: [
            [2, page],
            [2, page],
          ],
        },
      ],
      ['zero pre-apply', { ...base, preApplyChecksum: 0n, pages: [] }],
      ['zero post-apply', { ...base, postApplyChecksum: 0n, pages: [] }],
      ['wrong length', { ...base, pages: [[2, page.subarray(0, 100)]] }],
      ['beyond commit', { ...base, pages: [[11, page]] }],
    ];
    for (const [what, spec] of bad) {
      await assert.rejects(encodeSegment(out, spec), isCode('INVALID_ARGUMENT'), what);
      assert.equal(fs.existsSync(out), false, what);
    }
    const ok = await encodeSegment(out, {
      ...base,
      pages: [
        [2, page],
        [9, page],
      ],
    });
    const d = await decodeFile(out);
    assert.equal(ok.size, fs.statSync(out).size);
    assert.deepEqual(
      d.pages.map((p) => p.pgno),
      [2, 9],
    );
    assert.deepEqual([d.header.minTxid, d.header.maxTxid, d.trailer.postApplyChecksum], [2, 2, base.postApplyChecksum]);
  }),
);

test(
  'encodeSnapshotFromDb refuses a database with a non-empty -wal (BUSY) and writes nothing',
  withTmp(async (dir) => {
    const db = path.join(dir, 'wal.db');
    const conn = openDatabase(db);
    try {
      conn.pragma('journal_mode = WAL');
      conn.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
      const out = path.join(dir, 'out.ltx');
      await assert.rejects(encodeSnapshotFromDb(db, out, { txid: 1 }), isCode('BUSY'));
      assert.equal(fs.existsSync(out), false);
      conn.pragma('wal_checkpoint(TRUNCATE)');
      const r = await encodeSnapshotFromDb(db, out, { txid: 1 });
      assert.equal(r.postApplyChecksum, (await databaseChecksum(db)).checksum);
    } finally {
      conn.close();
    }
  }),
);

test(
  'empty and non-SQLite inputs',
  withTmp(async (dir) => {
    const empty = path.join(dir, 'empty.db');
    fs.writeFileSync(empty, '');
    const out = path.join(dir, 'empty.ltx');
    const r = await encodeSnapshotFromDb(empty, out, { txid: 1, timestamp: TS });
    assert.deepEqual([r.commit, r.postApplyChecksum], [0, EMPTY_DB_CHECKSUM]);
    const dest = path.join(dir, 'restored.db');
    assert.equal((await applyChain([fileOpener(out)], dest)).commit, 0);
    assert.equal(fs.statSync(dest).size, 0);
    const junk = path.join(dir, 'junk.db');
    fs.writeFileSync(junk, Buffer.alloc(4096, 7));
    await assert.rejects(encodeSnapshotFromDb(junk, out, { txid: 1 }), isCode('CORRUPT'));
    await assert.rejects(databaseChecksum(junk), isCode('CORRUPT'));
    const torn = path.join(dir, 'torn.db');
    fs.writeFileSync(torn, vectorBytes('chain-2.db').subarray(0, 4096 * 2 + 100));
    await assert.rejects(databaseChecksum(torn), isCode('CORRUPT'));
    const shortened = path.join(dir, 'shortened.db');
    fs.writeFileSync(shortened, vectorBytes('chain-2.db').subarray(0, 4096 * 2));
    await assert.rejects(
      databaseChecksum(shortened),
      isCode('CORRUPT'),
      'header page count disagrees with the file size',
    );
    await assert.rejects(encodeSnapshotFromDb(path.join(dir, 'missing.db'), out, { txid: 1 }), isCode('NOT_FOUND'));
    await assert.rejects(encodeSnapshotFromDb(empty, out, { txid: 0 }), isCode('INVALID_ARGUMENT'));
  }),
);
