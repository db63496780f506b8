import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { compressSync } from 'lz4-napi';
import { hasCode, type ErrorCode } from '../../src/core/errors.js';
import { ByteReader } from '../../src/ltx/byte-reader.js';
import { CHECKSUM_FLAG, pageChecksum } from '../../src/ltx/checksum.js';
import { encodeHeader, type LtxHeader } from '../../src/ltx/header.js';
import { encodePageFrame, readPageFrame, xxh32 } from '../../src/ltx/lz4-frame.js';
import { buildLtx, lz4Frame } from './ltx-builder.js';
import { chunked, decodeBytes } from './vector-files.js';

const isCode =
  (...codes: ErrorCode[]) =>
  (e: unknown) =>
    codes.some((c) => hasCode(e, c));
const block = (data: Buffer, dict?: Buffer): Buffer =>
  (dict === undefined ? compressSync(data) : compressSync(data, dict)).subarray(4);

function textPage(size: number, seed = 0): Buffer {
  const p = Buffer.alloc(size);
  for (let i = 0; i < size; i++) p[i] = 97 + ((i * 7 + seed) % 23);
  return p;
}

/** Reads one frame followed by junk, and checks the reader stopped exactly at the frame's end. */
async function readFrame(frame: Buffer, pageSize: number, chunkSizes?: number[]): Promise<Buffer> {
  const r = new ByteReader(chunked(Buffer.concat([frame, Buffer.from('JUNKJUNK')]), chunkSizes));
  const page = await readPageFrame(r, pageSize);
  assert.equal(r.position, frame.length, 'the frame reader consumed exactly one frame');
  return page;
}

test('xxh32 reference values and the v0.5.1 descriptor checksum', () => {
  assert.equal(xxh32(Buffer.from('abc')), 0x32d153ff);
  assert.equal(xxh32(), 0x02cc5d05);
  assert.equal((xxh32(Buffer.from([0x64, 0x40])) >>> 8) & 0xff, 0xa7);
});

test('encodePageFrame writes the v0.5.1 shape, compressed or stored', async () => {
  const cases: Array<[Buffer, boolean]> = [
    [textPage(4096), false],
    [randomBytes(4096), true],
    [Buffer.alloc(65536), false],
    [randomBytes(65536), true],
    [randomBytes(512), true],
  ];
  for (const [page, random] of cases) {
    const frame = encodePageFrame(page);
    assert.deepEqual([...frame.subarray(0, 7)], [0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7]);
    const word = frame.readUInt32LE(7);
    assert.equal(word >= 0x80000000, random, 'stored exactly when compression does not shrink the page');
    const len = word & 0x7fffffff;
    assert.equal(frame.length, 7 + 4 + len + 4 + 4);
    assert.equal(frame.readUInt32LE(11 + len), 0, 'end mark');
    assert.equal(frame.readUInt32LE(15 + len), xxh32(page), 'content checksum');
    assert.deepEqual(await readFrame(frame, page.length, [1, 3, 7, 1000]), page);
  }
  assert.throws(() => encodePageFrame(Buffer.alloc(65537)), isCode('INVALID_ARGUMENT'));
});

test('frames with every optional FLG field decode', async () => {
  const page = textPage(4096, 3);
  const b = block(page);
  const cases: Array<[string, Parameters<typeof lz4Frame>[0]]> = [
    ['content size', { flg: 0x6c, contentSize: 4096n, blocks: [{ bytes: b }], content: page }],
    ['dictionary id', { flg: 0x65, dictId: 0xdeadbeef, blocks: [{ bytes: b }], content: page }],
    ['block checksums', { flg: 0x74, blocks: [{ bytes: b }], content: page }],
    ['no content checksum', { flg: 0x60, blocks: [{ bytes: b }] }],
    ['everything', { flg: 0x7d, contentSize: 4096n, dictId: 7, blocks: [{ bytes: b }], content: page }],
    ['4 MiB block maximum', { bd: 0x70, blocks: [{ bytes: b }], content: page }],
    ['stored block', { blocks: [{ bytes: page, stored: true }], content: page }],
    [
      'many mixed blocks',
      {
        blocks: [
          { bytes: page.subarray(0, 1000), stored: true },
          { bytes: Buffer.alloc(0), stored: true },
          { bytes: block(page.subarray(1000, 3000)) },
          { bytes: page.subarray(3000), stored: true },
        ],
        content: page,
      },
    ],
  ];
  for (const [what, spec] of cases) assert.deepEqual(await readFrame(lz4Frame(spec), 4096), page, what);
});

test('dependent blocks may copy from earlier blocks of the same frame', async () => {
  const first = textPage(2048, 5);
  const second = Buffer.concat([first.subarray(100, 1100), textPage(1048, 9)]);
  const page = Buffer.concat([first, second]);
  const dependentBlock = block(second, first);
  const blocks = [{ bytes: block(first) }, { bytes: dependentBlock }];
  assert.deepEqual(await readFrame(lz4Frame({ flg: 0x44, blocks, content: page }), 4096), page);
  await assert.rejects(
    readFrame(lz4Frame({ flg: 0x64, blocks, content: page }), 4096),
    isCode('CORRUPT'),
    'independent blocks may not reach back',
  );
});

test('malformed frames are rejected with typed errors', async () => {
  const page = textPage(4096, 1);
  const b = block(page);
  const good = lz4Frame({ blocks: [{ bytes: b }], content: page });
  const patch = (at: number, v: number): Buffer => {
    const f = Buffer.from(good);
    f[at] = v;
    return f;
  };
  const cases: Array<[string, Buffer, ErrorCode]> = [
    ['bad magic', patch(0, 0x05), 'CORRUPT'],
    ['bad HC', patch(6, 0xa8), 'CORRUPT'],
    ['version 00', lz4Frame({ flg: 0x24, blocks: [{ bytes: b }], content: page }), 'CORRUPT'],
    ['reserved FLG bit', lz4Frame({ flg: 0x66, blocks: [{ bytes: b }], content: page }), 'CORRUPT'],
    ['reserved BD bits', lz4Frame({ bd: 0x41, blocks: [{ bytes: b }], content: page }), 'CORRUPT'],
    ['BD high bit', lz4Frame({ bd: 0xc0, blocks: [{ bytes: b }], content: page }), 'CORRUPT'],
    ['block max id 3', lz4Frame({ bd: 0x30, blocks: [{ bytes: b }], content: page }), 'CORRUPT'],
    [
      'content size mismatch',
      lz4Frame({ flg: 0x6c, contentSize: 4095n, blocks: [{ bytes: b }], content: page }),
      'CORRUPT',
    ],
    [
      'block checksum mismatch',
      lz4Frame({ flg: 0x74, blocks: [{ bytes: b, checksum: 1 }], content: page }),
      'CHECKSUM_MISMATCH',
    ],
    ['content checksum mismatch', lz4Frame({ blocks: [{ bytes: b }], contentChecksum: 1 }), 'CHECKSUM_MISMATCH'],
    ['short page', lz4Frame({ blocks: [{ bytes: page.subarray(0, 4095), stored: true }], content: page }), 'CORRUPT'],
    [
      'long page',
      lz4Frame({ blocks: [{ bytes: b }, { bytes: Buffer.from('x'), stored: true }], content: page }),
      'CORRUPT',
    ],
    [
      'compressed block too big',
      lz4Frame({ blocks: [{ bytes: block(Buffer.concat([page, page])) }], content: page }),
      'CORRUPT',
    ],
    ['garbage block', lz4Frame({ blocks: [{ bytes: Buffer.from([0xff, 0xff, 0xff]) }], content: page }), 'CORRUPT'],
    ['no blocks', lz4Frame({ blocks: [], content: page }), 'CORRUPT'],
  ];
  for (const [what, frame, code] of cases) await assert.rejects(readFrame(frame, 4096), isCode(code), what);
  const huge = Buffer.from(good.subarray(0, 7));
  const word = Buffer.alloc(4);
  word.writeUInt32LE(0x10001, 0);
  await assert.rejects(
    readFrame(Buffer.concat([huge, word, Buffer.alloc(0x10001)]), 4096),
    isCode('CORRUPT'),
    'block above the BD maximum',
  );
  for (let n = 0; n < good.length; n++) {
    await assert.rejects(
      readPageFrame(new ByteReader(chunked(good.subarray(0, n))), 4096),
      isCode('CORRUPT'),
      `frame truncated to ${n}`,
    );
  }
});

function header(over: Partial<LtxHeader>): LtxHeader {
  return {
    flags: 0,
    pageSize: 4096,
    commit: 2,
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

function sizedBlock(data: Buffer, len?: number): Buffer {
  const b = block(data);
  const s = Buffer.alloc(4);
  s.writeUInt32BE(len ?? b.length, 0);
  return Buffer.concat([s, b]);
}

test('v0.5.2 size-prefixed block pages (page flag 0x0001) are accepted', async () => {
  const p1 = textPage(4096, 11);
  const p2 = randomBytes(4096);
  const post = CHECKSUM_FLAG | (pageChecksum(1, p1) ^ pageChecksum(2, p2));
  const bytes = buildLtx(
    encodeHeader(header({})),
    [
      { pgno: 1, flags: 1, body: sizedBlock(p1), data: p1 },
      { pgno: 2, flags: 0, body: encodePageFrame(p2), data: p2 },
    ],
    post,
  );
  const d = await decodeBytes(bytes, [5, 17, 100]);
  assert.deepEqual(
    d.pages.map((p) => p.data),
    [p1, p2],
  );
  assert.equal(d.trailer.postApplyChecksum, post);

  const one = (body: Buffer, data = p1): Buffer =>
    buildLtx(encodeHeader(header({ commit: 1 })), [{ pgno: 1, flags: 1, body, data }], pageChecksum(1, data));
  await assert.rejects(decodeBytes(one(sizedBlock(p1, 0))), isCode('CORRUPT'), 'zero size');
  await assert.rejects(decodeBytes(one(sizedBlock(p1, 9000))), isCode('CORRUPT'), 'impossible size');
  await assert.rejects(
    decodeBytes(one(sizedBlock(p1.subarray(0, 4000)), Buffer.concat([p1.subarray(0, 4000), Buffer.alloc(96)]))),
    isCode('CORRUPT'),
    'short block',
  );
  await assert.rejects(decodeBytes(one(sizedBlock(Buffer.concat([p1, p1])))), isCode('CORRUPT'), 'long block');
});
