import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasCode, type ErrorCode } from '../../src/core/errors.js';
import { applyChain } from '../../src/ltx/apply.js';
import { CHECKSUM_FLAG, EMPTY_DB_CHECKSUM, foldPage, pageChecksum } from '../../src/ltx/checksum.js';
import { encodeHeader, type LtxHeader } from '../../src/ltx/header.js';
import { encodePageFrame } from '../../src/ltx/lz4-frame.js';
import { PageIndex } from '../../src/ltx/page-index.js';
import { buildLtx, type RawPage } from './ltx-builder.js';
import { VECTOR_NAMES, VECTORS, decodeBytes, vectorBytes } from './vector-files.js';

const isTyped =
  (...codes: ErrorCode[]) =>
  (e: unknown) =>
    codes.some((c) => hasCode(e, c));
const corruptOrMismatch = isTyped('CORRUPT', 'CHECKSUM_MISMATCH');

/** Byte ranges holding compressed LZ4 payload, where a flip may legitimately decode to the same page. */
function payloadRanges(name: string): Array<[number, number]> {
  return VECTORS.files[name]!.pages.filter((p) => !p.lz4_block_stored_uncompressed).map((p) => [
    p.frame_offset + 6 + 7 + 4,
    p.frame_offset + p.frame_size - 8,
  ]);
}

for (const name of VECTOR_NAMES) {
  test(`${name}: truncation at every offset is rejected`, async () => {
    const bytes = vectorBytes(name);
    for (let n = 0; n < bytes.length; n++) {
      await assert.rejects(
        decodeBytes(bytes.subarray(0, n), [(n % 7) + 1, 64]),
        corruptOrMismatch,
        `truncated to ${n}`,
      );
    }
    await assert.rejects(
      decodeBytes(Buffer.concat([bytes, Buffer.from([0])])),
      isTyped('CORRUPT'),
      'one trailing byte',
    );
  });

  test(`${name}: flipped bytes fail, or (inside compressed payload) decode to identical pages`, async () => {
    const bytes = vectorBytes(name);
    const original = await decodeBytes(bytes);
    const payload = payloadRanges(name);
    const inPayload = (i: number) => payload.some(([a, b]) => i >= a && i < b);
    let undetected = 0;
    for (let i = 0; i < bytes.length; i++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const bad = Buffer.from(bytes);
        bad[i]! ^= mask;
        let decoded;
        try {
          decoded = await decodeBytes(bad);
        } catch (e) {
          assert.ok(corruptOrMismatch(e), `flip 0x${mask.toString(16)} at ${i}: ${String(e)}`);
          continue;
        }
        assert.ok(inPayload(i), `flip 0x${mask.toString(16)} at ${i} (outside any payload) went undetected`);
        assert.deepEqual(
          decoded.pages.map((p) => [p.pgno, p.data]),
          original.pages.map((p) => [p.pgno, p.data]),
        );
        assert.deepEqual(decoded.header, original.header);
        assert.deepEqual(decoded.trailer, original.trailer);
        undetected++;
      }
    }
    assert.ok(undetected < 40, `${undetected} harmless payload flips`);
  });
}

test('a corrupt chain member leaves no output file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const [a, b, c] = VECTORS.chain as [string, string, string];
    const dest = path.join(dir, 'out.db');
    for (const [victim, at] of [
      [a, 50],
      [b, 120],
      [c, 390],
      [c, 410],
    ] as const) {
      const bad = Buffer.from(vectorBytes(victim));
      bad[at]! ^= 0x80;
      const open = (n: string) => async () =>
        (async function* () {
          yield n === victim ? bad : vectorBytes(n);
        })();
      await assert.rejects(applyChain([a, b, c].map(open), dest), corruptOrMismatch, `${victim}@${at}`);
      assert.deepEqual(fs.readdirSync(dir), []);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function header(over: Partial<LtxHeader>): LtxHeader {
  return {
    flags: 0,
    pageSize: 512,
    commit: 3,
    minTxid: 1,
    maxTxid: 1,
    timestamp: 1,
    preApplyChecksum: 0n,
    walOffset: 0,
    walSize: 0,
    walSalt1: 0,
    walSalt2: 0,
    nodeId: 0,
    ...over,
  };
}

const page = (n: number): Buffer => Buffer.alloc(512, n);
const raw = (pgno: number, flags = 0): RawPage => ({
  pgno,
  flags,
  body: encodePageFrame(page(pgno)),
  data: page(pgno),
});
const rolling = (pgnos: number[]): bigint =>
  pgnos.reduce((c, p) => foldPage(c, pageChecksum(p, page(p))), EMPTY_DB_CHECKSUM);
const SEG = { minTxid: 2, maxTxid: 2, preApplyChecksum: CHECKSUM_FLAG | 9n };

test('well-sealed files that break one decoder rule are rejected', async () => {
  const good = buildLtx(encodeHeader(header({})), [raw(1), raw(2), raw(3)], rolling([1, 2, 3]));
  assert.equal((await decodeBytes(good)).pages.length, 3);
  const segHeader = encodeHeader(header(SEG));
  const wrongIndex = new PageIndex();
  wrongIndex.add(1, 100, 9);
  const cases: Array<[string, Buffer, ErrorCode]> = [
    [
      'snapshot post-apply differs from its pages',
      buildLtx(encodeHeader(header({})), [raw(1), raw(2), raw(3)], rolling([1, 2])),
      'CHECKSUM_MISMATCH',
    ],
    [
      'snapshot missing its last page',
      buildLtx(encodeHeader(header({})), [raw(1), raw(2)], rolling([1, 2])),
      'CORRUPT',
    ],
    ['snapshot with a gap', buildLtx(encodeHeader(header({})), [raw(1), raw(3)], rolling([1, 3])), 'CORRUPT'],
    ['snapshot not starting at 1', buildLtx(encodeHeader(header({})), [raw(2), raw(3)], rolling([2, 3])), 'CORRUPT'],
    ['segment pages out of order', buildLtx(segHeader, [raw(3), raw(1)], CHECKSUM_FLAG | 1n), 'CORRUPT'],
    ['segment duplicate page', buildLtx(segHeader, [raw(2), raw(2)], CHECKSUM_FLAG | 1n), 'CORRUPT'],
    ['segment page beyond commit', buildLtx(segHeader, [raw(4)], CHECKSUM_FLAG | 1n), 'CORRUPT'],
    [
      'lock page stored',
      buildLtx(encodeHeader(header({ ...SEG, commit: 3000000 })), [raw(2097153)], CHECKSUM_FLAG | 1n),
      'CORRUPT',
    ],
    ['unknown page flags', buildLtx(segHeader, [raw(1, 2)], CHECKSUM_FLAG | 1n), 'CORRUPT'],
    [
      'end marker with flags',
      buildLtx(segHeader, [raw(1)], CHECKSUM_FLAG | 1n, { endMarker: Buffer.from([0, 0, 0, 0, 0, 1]) }),
      'CORRUPT',
    ],
    [
      'index offset wrong',
      buildLtx(segHeader, [raw(1)], CHECKSUM_FLAG | 1n, { index: wrongIndex.encode() }),
      'CORRUPT',
    ],
    [
      'index missing',
      buildLtx(segHeader, [raw(1)], CHECKSUM_FLAG | 1n, { index: new PageIndex().encode() }),
      'CORRUPT',
    ],
    ['post-apply without the flag bit', buildLtx(segHeader, [raw(1)], 1n), 'CORRUPT'],
    ['post-apply zero', buildLtx(segHeader, [raw(1)], 0n), 'CORRUPT'],
    [
      'empty database with a non-empty checksum',
      buildLtx(encodeHeader(header({ commit: 0 })), [], CHECKSUM_FLAG | 1n),
      'CORRUPT',
    ],
    [
      'no-checksum file with a post-apply checksum',
      buildLtx(encodeHeader(header({ ...SEG, flags: 2, preApplyChecksum: 0n })), [raw(1)], CHECKSUM_FLAG | 1n),
      'CORRUPT',
    ],
  ];
  for (const [what, bytes, code] of cases) await assert.rejects(decodeBytes(bytes), isTyped(code), what);

  const trailerFlip = Buffer.from(good);
  trailerFlip[trailerFlip.length - 1]! ^= 1;
  await assert.rejects(decodeBytes(trailerFlip), isTyped('CHECKSUM_MISMATCH'), 'file checksum');
  const noFlag = Buffer.from(good);
  noFlag[noFlag.length - 8]! &= 0x7f;
  await assert.rejects(decodeBytes(noFlag), isTyped('CHECKSUM_MISMATCH'), 'file checksum without bit 63');
});

test('a no-checksum file decodes but cannot take part in a chain', async () => {
  const bytes = buildLtx(encodeHeader(header({ flags: 2 })), [raw(1), raw(2), raw(3)], 0n);
  const d = await decodeBytes(bytes);
  assert.equal(d.trailer.postApplyChecksum, 0n);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const open = async () =>
      (async function* () {
        yield bytes;
      })();
    await assert.rejects(applyChain([open], path.join(dir, 'x.db')), isTyped('CORRUPT'));
    assert.deepEqual(fs.readdirSync(dir), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
