import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasCode } from '../../src/core/errors.js';
import { applyChain } from '../../src/ltx/apply.js';
import {
  CHECKSUM_FLAG,
  crc64,
  Crc64,
  databaseChecksum,
  EMPTY_DB_CHECKSUM,
  foldPage,
  lockPgno,
  pageChecksum,
} from '../../src/ltx/checksum.js';
import { LtxDecoder, decodeFile, openLtxFile } from '../../src/ltx/decoder.js';
import { decodeHeader, encodeHeader } from '../../src/ltx/header.js';
import { VECTOR_DIR, VECTOR_NAMES, VECTORS, hex, vectorBytes } from './vector-files.js';

const opener = (name: string) => async () => fs.createReadStream(path.join(VECTOR_DIR, name));

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

test('CRC-64/GO-ISO check value and streaming equivalence', () => {
  assert.equal(hex(crc64(Buffer.from('123456789'))), 'b90956c775a41001');
  assert.equal(hex(crc64(Buffer.from('1234'), Buffer.from('56789'))), 'b90956c775a41001');
  const s = new Crc64().update(Buffer.from('12')).update(Buffer.from('345'), Buffer.from('6789'));
  assert.equal(hex(s.digest()), 'b90956c775a41001');
  assert.equal(crc64(), 0n);
  assert.equal(CHECKSUM_FLAG, 0x8000000000000000n);
  assert.equal(EMPTY_DB_CHECKSUM, CHECKSUM_FLAG);
  assert.equal(foldPage(foldPage(EMPTY_DB_CHECKSUM, 0x8000000000000123n), 0x8000000000000123n), EMPTY_DB_CHECKSUM);
});

test('lock page numbers', () => {
  assert.equal(lockPgno(4096), 262145);
  assert.equal(lockPgno(512), 2097153);
  assert.equal(lockPgno(65536), 16385);
});

for (const name of VECTOR_NAMES) {
  const facts = VECTORS.files[name]!;
  test(`vector ${name} decodes to its recorded facts`, async () => {
    const { header, pages, trailer } = await decodeFile(path.join(VECTOR_DIR, name));
    assert.equal(header.flags, facts.flags);
    assert.equal(header.pageSize, facts.page_size);
    assert.equal(header.commit, facts.commit);
    assert.equal(header.minTxid, facts.min_txid);
    assert.equal(header.maxTxid, facts.max_txid);
    assert.equal(header.timestamp, facts.timestamp_ms);
    assert.equal(header.minTxid === 1, facts.is_snapshot);
    assert.equal(hex(header.preApplyChecksum), facts.pre_apply_checksum);
    assert.equal(hex(trailer.postApplyChecksum), facts.post_apply_checksum);
    assert.equal(hex(trailer.fileChecksum), facts.file_checksum);
    assert.deepEqual(
      pages.map((p) => [p.pgno, p.offset, p.size, hex(pageChecksum(p.pgno, p.data))]),
      facts.pages.map((p) => [p.pgno, p.frame_offset, p.frame_size, p.page_checksum]),
    );
    const bytes = vectorBytes(name);
    assert.equal(bytes.length, facts.size);
    assert.equal(Number(bytes.readBigUInt64BE(bytes.length - 24)), facts.page_index_size_field);
    assert.equal(facts.page_index_offset + facts.page_index_size_field + 8 + 16, facts.size);
    for (const p of facts.pages) {
      const word = bytes.readUInt32LE(p.frame_offset + 6 + 7);
      assert.equal(word >= 0x80000000, p.lz4_block_stored_uncompressed);
      assert.deepEqual(
        [...bytes.subarray(p.frame_offset + 6, p.frame_offset + 13)],
        [0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7],
      );
    }
    assert.deepEqual(encodeHeader(header), bytes.subarray(0, 100));
    assert.deepEqual(decodeHeader(bytes.subarray(0, 100)), header);
  });

  test(`vector ${name}: the expected database has the recorded rolling checksum`, async () => {
    const db = await databaseChecksum(path.join(VECTOR_DIR, facts.database_after_apply));
    assert.equal(hex(db.checksum), facts.database_rolling_checksum);
    assert.equal(db.pageSize, facts.page_size);
    assert.equal(db.commit, facts.commit);
  });
}

test('the 1-page snapshot header matches the documented bytes', () => {
  const hdr = vectorBytes('snapshot-1page-ps4096.ltx').subarray(0, 100);
  assert.equal(
    hdr.subarray(0, 40).toString('hex'),
    '4c545831000000000000100000000001' + '0000000000000001' + '0000000000000001' + '0000018bcfe56800',
  );
  assert.ok(hdr.subarray(40).every((b) => b === 0));
});

for (const name of VECTOR_NAMES.filter((n) => VECTORS.files[n]!.is_snapshot)) {
  test(
    `snapshot ${name} materializes to its .db byte for byte`,
    withTmp(async (dir) => {
      const dest = path.join(dir, 'out.db');
      const facts = VECTORS.files[name]!;
      const r = await applyChain([opener(name)], dest);
      assert.deepEqual(fs.readFileSync(dest), vectorBytes(facts.database_after_apply));
      assert.equal(hex(r.checksum), facts.post_apply_checksum);
      assert.equal(r.txid, facts.max_txid);
      assert.equal(r.commit, facts.commit);
      assert.equal(r.pageSize, facts.page_size);
    }),
  );
}

test(
  'the chain applies to chain-2.db after two members and chain-3.db after three',
  withTmp(async (dir) => {
    const [a, b, c] = VECTORS.chain as [string, string, string];
    fs.writeFileSync(path.join(dir, 'two.db-wal'), 'stale');
    fs.writeFileSync(path.join(dir, 'two.db-shm'), 'stale');
    const two = await applyChain([opener(a), opener(b)], path.join(dir, 'two.db'));
    assert.deepEqual(fs.readFileSync(path.join(dir, 'two.db')), vectorBytes('chain-2.db'));
    assert.deepEqual(
      { ...two, checksum: hex(two.checksum) },
      { txid: 2, checksum: '8af1acafa9eb71fb', pageSize: 4096, commit: 3 },
    );
    assert.equal(fs.existsSync(path.join(dir, 'two.db-wal')), false);
    assert.equal(fs.existsSync(path.join(dir, 'two.db-shm')), false);
    const three = await applyChain([opener(a), opener(b), opener(c)], path.join(dir, 'three.db'));
    assert.deepEqual(fs.readFileSync(path.join(dir, 'three.db')), vectorBytes('chain-3.db'));
    assert.deepEqual(
      { ...three, checksum: hex(three.checksum) },
      { txid: 3, checksum: 'cfb18049e6a5a33a', pageSize: 4096, commit: 2 },
    );
    assert.deepEqual(fs.readdirSync(dir).sort(), ['three.db', 'two.db']);
  }),
);

test(
  'broken chains are rejected and leave no output file',
  withTmp(async (dir) => {
    const [a, b, c] = VECTORS.chain as [string, string, string];
    const dest = path.join(dir, 'out.db');
    const cases: Array<[string, string[], string]> = [
      ['gap (member 2 dropped)', [a, c], 'CORRUPT'],
      ['reordered segments', [a, c, b], 'CORRUPT'],
      ['segment first', [b, c], 'CORRUPT'],
      ['two snapshots', [a, a], 'CORRUPT'],
      ['segment repeated', [a, b, b], 'CORRUPT'],
      ['foreign snapshot under a segment', ['snapshot-1page-ps4096.ltx', b], 'CHECKSUM_MISMATCH'],
      ['page size change', ['snapshot-ps512-incompressible.ltx', b], 'CORRUPT'],
    ];
    for (const [what, members, code] of cases) {
      await assert.rejects(applyChain(members.map(opener), dest), (e) => hasCode(e, code as 'CORRUPT'), what);
      assert.deepEqual(fs.readdirSync(dir), [], `${what} left files behind`);
    }
    await assert.rejects(applyChain([], dest), (e) => hasCode(e, 'INVALID_ARGUMENT'));
    await assert.rejects(applyChain([opener('missing.ltx')], dest), (e) => hasCode(e, 'NOT_FOUND'));
    assert.deepEqual(fs.readdirSync(dir), []);
  }),
);

test(
  'a failed chain leaves an existing destination untouched',
  withTmp(async (dir) => {
    const dest = path.join(dir, 'out.db');
    fs.writeFileSync(dest, 'previous');
    const [a, , c] = VECTORS.chain as [string, string, string];
    await assert.rejects(applyChain([opener(a), opener(c)], dest), (e) => hasCode(e, 'CORRUPT'));
    assert.equal(fs.readFileSync(dest, 'utf8'), 'previous');
    assert.deepEqual(fs.readdirSync(dir), ['out.db']);
  }),
);

test('the decoder hands out the trailer only after the last page', async () => {
  const dec = openLtxFile(path.join(VECTOR_DIR, 'chain-1-snapshot.ltx'));
  assert.equal((await dec.header()).commit, 2);
  assert.throws(
    () => dec.trailer(),
    (e) => hasCode(e, 'INVALID_ARGUMENT'),
  );
  const seen: number[] = [];
  for await (const p of dec.pages()) seen.push(p.pgno);
  assert.deepEqual(seen, [1, 2]);
  assert.equal(hex(dec.trailer().postApplyChecksum), 'a8238fba63c6e23a');
});

test('a decoder abandoned mid-way releases its stream', async () => {
  const stream = fs.createReadStream(path.join(VECTOR_DIR, 'snapshot-ps512-incompressible.ltx'), { highWaterMark: 64 });
  const dec = new LtxDecoder(stream);
  for await (const p of dec.pages()) {
    assert.equal(p.pgno, 1);
    break;
  }
  assert.equal(stream.destroyed, true);
  assert.throws(
    () => dec.trailer(),
    (e) => hasCode(e, 'INVALID_ARGUMENT'),
  );
});
