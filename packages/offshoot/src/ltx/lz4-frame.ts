import { fail } from '../core/errors.js';
import type { ByteReader } from './byte-reader.js';
import { pageRawAndXxh32 } from './checksum.js';
import type { Register } from './crc64.js';
import { compressBlock, decompressBlock } from './lz4-block.js';
import { decodeBlockInto } from './lz4-decode.js';
import { xxh32 } from './xxh32.js';

export { xxh32 } from './xxh32.js';

const FRAME_MAGIC = 0x184d2204;
/** FLG as LTX v0.5.1 writes it: version 01, independent blocks, content checksum. */
const WRITE_FLG = 0x64;
/** BD as LTX v0.5.1 writes it: 64 KiB maximum block size. */
const WRITE_BD = 0x40;
const STORED_BIT = 0x80000000;
const CORRUPT_HINT = 'the LTX file is damaged; re-fetch or re-create it';

/** The descriptor checksum byte: second byte of xxh32 over FLG..(dictID). */
function headerChecksum(descriptor: Uint8Array): number {
  return (xxh32(descriptor) >>> 8) & 0xff;
}

const FRAME_PREFIX = Buffer.alloc(7);
FRAME_PREFIX.writeUInt32LE(FRAME_MAGIC, 0);
FRAME_PREFIX[4] = WRITE_FLG;
FRAME_PREFIX[5] = WRITE_BD;
FRAME_PREFIX[6] = headerChecksum(FRAME_PREFIX.subarray(4, 6));

/**
 * One page as an LTX v0.5.1 LZ4 frame: descriptor 64 40 A7, one block (stored raw when compression does
 * not shrink it), end mark, xxh32 content checksum.
 */
export function encodePageFrame(page: Uint8Array): Buffer {
  if (page.length > 0x10000)
    throw fail('INVALID_ARGUMENT', `page of ${page.length} bytes exceeds the 64 KiB LZ4 block`, {
      hint: 'pages are at most 65536 bytes',
    });
  const packed = compressBlock(page);
  const stored = packed.length >= page.length;
  const body = stored ? page : packed;
  const frame = Buffer.allocUnsafe(FRAME_PREFIX.length + 4 + body.length + 8);
  FRAME_PREFIX.copy(frame, 0);
  frame.writeUInt32LE(stored ? (STORED_BIT | body.length) >>> 0 : body.length, 7);
  frame.set(body, 11);
  const tail = 11 + body.length;
  frame.writeUInt32LE(0, tail);
  frame.writeUInt32LE(xxh32(page), tail + 4);
  return frame;
}

function corrupt(msg: string): never {
  throw fail('CORRUPT', `invalid LZ4 frame: ${msg}`, { hint: CORRUPT_HINT });
}

/**
 * Reads one LZ4 frame holding exactly one page of `pageSize` bytes, honouring every FLG bit (content size,
 * dictID, block checksums, content checksum, dependent and stored blocks). It consumes the frame and
 * nothing after it.
 */
export async function readPageFrame(r: ByteReader, pageSize: number): Promise<Buffer> {
  const head = await r.read(6, 'LZ4 frame descriptor');
  if (head.readUInt32LE(0) !== FRAME_MAGIC) corrupt(`bad magic 0x${head.readUInt32LE(0).toString(16)}`);
  const flg = head[4] as number;
  const bd = head[5] as number;
  if (flg >> 6 !== 1) corrupt(`unsupported version ${flg >> 6}`);
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) corrupt('reserved descriptor bits set');
  const blockMaxId = (bd >> 4) & 0x7;
  if (blockMaxId < 4) corrupt(`invalid block maximum size id ${blockMaxId}`);
  const blockMax = 1 << (2 * blockMaxId + 8);
  const dependent = (flg & 0x20) === 0;
  const blockChecksums = (flg & 0x10) !== 0;
  const hasContentSize = (flg & 0x08) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  const hasDictId = (flg & 0x01) !== 0;

  const extra = await r.read((hasContentSize ? 8 : 0) + (hasDictId ? 4 : 0) + 1, 'LZ4 frame descriptor');
  const hc = extra[extra.length - 1] as number;
  // Nearly every frame carries the v0.5.1 descriptor, whose checksum is known; hash only the others.
  const knownDescriptor = flg === WRITE_FLG && bd === WRITE_BD && extra.length === 1;
  const wantHc = knownDescriptor
    ? FRAME_PREFIX[6]
    : headerChecksum(Buffer.concat([head.subarray(4, 6), extra.subarray(0, extra.length - 1)]));
  if (hc !== wantHc) corrupt('descriptor checksum mismatch');
  if (hasContentSize && extra.readBigUInt64LE(0) !== BigInt(pageSize)) {
    corrupt(`content size ${extra.readBigUInt64LE(0)} is not the page size ${pageSize}`);
  }

  let page: Buffer | undefined;
  let produced = 0;
  for (;;) {
    const word = (await r.read(4, 'LZ4 block size')).readUInt32LE(0);
    if (word === 0) break;
    const stored = word >= STORED_BIT;
    const len = (word & 0x7fffffff) >>> 0;
    if (len > blockMax) corrupt(`block of ${len} bytes exceeds the frame's ${blockMax}-byte maximum`);
    const block = await r.read(len, 'LZ4 block');
    if (blockChecksums && (await r.read(4, 'LZ4 block checksum')).readUInt32LE(0) !== xxh32(block)) {
      throw fail('CHECKSUM_MISMATCH', 'LZ4 block checksum mismatch', { hint: CORRUPT_HINT });
    }
    const room = pageSize - produced;
    let out: Buffer;
    if (stored) {
      if (len > room) corrupt(`stored block overruns the ${pageSize}-byte page`);
      out = block;
    } else {
      const dict = dependent && page !== undefined ? page.subarray(0, produced) : undefined;
      out = decompressBlock(block, Math.min(room, blockMax), dict);
    }
    if (produced === 0 && out.length === pageSize && !stored) {
      page = out;
    } else if (out.length > 0) {
      page ??= Buffer.allocUnsafe(pageSize);
      page.set(out, produced);
    }
    produced += out.length;
  }
  if (produced !== pageSize || page === undefined)
    corrupt(`frame holds ${produced} bytes, not the page size ${pageSize}`);
  if (contentChecksum && (await r.read(4, 'LZ4 content checksum')).readUInt32LE(0) !== xxh32(page)) {
    throw fail('CHECKSUM_MISMATCH', 'LZ4 content checksum mismatch', { hint: CORRUPT_HINT });
  }
  return page;
}

// Pages decoded on the fast path are carved out of large slabs: one allocation per few hundred pages, and each page
// stays valid for as long as its holder keeps it (the slab is never reused).
const SLAB_BYTES = 4 << 20;
let slab = Buffer.allocUnsafe(0);
let slabUsed = 0;

function slabPage(pageSize: number): { buf: Buffer; at: number } {
  if (slabUsed + pageSize > slab.length) {
    slab = Buffer.allocUnsafe(Math.max(SLAB_BYTES, pageSize));
    slabUsed = 0;
  }
  const at = slabUsed;
  slabUsed += pageSize;
  return { buf: slab, at };
}

/**
 * Parses, from the start of `buf`, a frame in the shape LTX v0.5.1 writes (descriptor 64 40 A7, one block, end
 * mark, content checksum) when it lies wholly inside `buf` and is intact: the decoder's synchronous fast path.
 * Anything else (another descriptor, several blocks, a frame cut by the end of `buf`, any damage) gives undefined,
 * and readPageFrame then reads and judges that frame in full. A stored page is returned as a view of `buf`; a
 * compressed one is decoded into `into` (exactly one page long) when given, else into a fresh slab slice. The page's
 * raw CRC-64 register lands in `raw`, from the same pass that checks the content checksum.
 */
export function parseCommonPageFrame(
  buf: Buffer,
  pageSize: number,
  into: Buffer | undefined,
  raw: Register,
): { page: Buffer; length: number } | undefined {
  if (buf.length < 19 || buf.readUInt32LE(0) !== FRAME_MAGIC) return undefined;
  if (buf[4] !== WRITE_FLG || buf[5] !== WRITE_BD || buf[6] !== FRAME_PREFIX[6]) return undefined;
  const word = buf.readUInt32LE(7);
  const len = (word & 0x7fffffff) >>> 0;
  const end = 11 + len + 8;
  if (len === 0 || len > 0x10000 || buf.length < end || buf.readUInt32LE(11 + len) !== 0) return undefined;
  const block = buf.subarray(11, 11 + len);
  let page: Buffer;
  if (word >= STORED_BIT) {
    if (len !== pageSize) return undefined;
    page = block;
  } else if (into !== undefined) {
    if (decodeBlockInto(block, into, 0, pageSize) !== pageSize) return undefined;
    page = into;
  } else {
    const { buf: slabBuf, at } = slabPage(pageSize);
    if (decodeBlockInto(block, slabBuf, at, pageSize) !== pageSize) {
      slabUsed = at;
      return undefined;
    }
    page = slabBuf.subarray(at, at + pageSize);
  }
  if (buf.readUInt32LE(11 + len + 4) !== pageRawAndXxh32(page, raw)) return undefined;
  return { page, length: end };
}

/** Largest raw block LZ4 can emit for `n` input bytes (LZ4_COMPRESSBOUND). */
function compressBound(n: number): number {
  return n + Math.floor(n / 255) + 16;
}

/**
 * Reads a v0.5.2+ size-prefixed page (page flag 0x0001): a BE u32 length, then one raw LZ4 block that
 * must decompress to exactly `pageSize` bytes. Returns the 4 length bytes too, since the file checksum
 * covers them.
 */
export async function readPageBlock(r: ByteReader, pageSize: number): Promise<{ sizeField: Buffer; page: Buffer }> {
  const sizeField = await r.read(4, 'LZ4 block size');
  const len = sizeField.readUInt32BE(0);
  if (len === 0 || len > compressBound(pageSize))
    corrupt(`block size ${len} is impossible for a ${pageSize}-byte page`);
  const page = decompressBlock(await r.read(len, 'LZ4 block'), pageSize);
  if (page.length !== pageSize) corrupt(`block holds ${page.length} bytes, not the page size ${pageSize}`);
  return { sizeField, page };
}
