import { CHECKSUM_FLAG, Crc64 } from '../../src/ltx/checksum.js';
import { xxh32 } from '../../src/ltx/lz4-frame.js';
import { PageIndex } from '../../src/ltx/page-index.js';

/** A page as it sits in the file: header fields, the bytes after the 6-byte page header, and its content. */
export interface RawPage {
  pgno: number;
  flags?: number;
  /** Everything after the page header: an LZ4 frame, or (flag 0x0001) a BE u32 size and a raw block. */
  body: Buffer;
  /** The decompressed page, which the file checksum covers. */
  data: Buffer;
}

/**
 * Assembles LTX bytes from a header and raw pages with a correct index and file checksum, so tests can
 * present well-sealed files that break one rule at a time.
 */
export function buildLtx(
  headerBytes: Buffer,
  pages: RawPage[],
  postApply: bigint,
  opts: { index?: Buffer; endMarker?: Buffer } = {},
): Buffer {
  const crc = new Crc64().update(headerBytes);
  const parts: Buffer[] = [headerBytes];
  const index = new PageIndex();
  let offset = headerBytes.length;
  for (const p of pages) {
    const ph = Buffer.alloc(6);
    ph.writeUInt32BE(p.pgno, 0);
    ph.writeUInt16BE(p.flags ?? 0, 4);
    parts.push(ph, p.body);
    crc.update(ph);
    if (((p.flags ?? 0) & 1) !== 0) crc.update(p.body.subarray(0, 4));
    crc.update(p.data);
    index.add(p.pgno, offset, 6 + p.body.length);
    offset += 6 + p.body.length;
  }
  const end = opts.endMarker ?? Buffer.alloc(6);
  const idx = opts.index ?? index.encode();
  const post = Buffer.alloc(8);
  post.writeBigUInt64BE(postApply, 0);
  const file = Buffer.alloc(8);
  file.writeBigUInt64BE(CHECKSUM_FLAG | crc.update(end, idx, post).digest(), 0);
  return Buffer.concat([...parts, end, idx, post, file]);
}

/** One block of a hand-made LZ4 frame. */
export interface FrameBlock {
  bytes: Buffer;
  stored?: boolean;
  /** Override for the block checksum (when the frame has them). */
  checksum?: number;
}

/** Options of a hand-made LZ4 frame; defaults give the v0.5.1 shape. */
export interface FrameSpec {
  flg?: number;
  bd?: number;
  contentSize?: bigint;
  dictId?: number;
  hc?: number;
  blocks: FrameBlock[];
  /** The page, for the content checksum; or an explicit checksum value. */
  content?: Buffer;
  contentChecksum?: number;
}

/** Builds an LZ4 frame byte by byte, honouring whichever FLG bits the spec sets. */
export function lz4Frame(spec: FrameSpec): Buffer {
  const flg = spec.flg ?? 0x64;
  const desc: number[] = [flg, spec.bd ?? 0x40];
  if ((flg & 0x08) !== 0) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(spec.contentSize ?? 0n, 0);
    desc.push(...b);
  }
  if ((flg & 0x01) !== 0) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(spec.dictId ?? 0, 0);
    desc.push(...b);
  }
  const hc = spec.hc ?? (xxh32(Buffer.from(desc)) >>> 8) & 0xff;
  const out: Buffer[] = [Buffer.from([0x04, 0x22, 0x4d, 0x18, ...desc, hc])];
  for (const blk of spec.blocks) {
    const w = Buffer.alloc(4);
    w.writeUInt32LE(blk.stored === true ? (0x80000000 | blk.bytes.length) >>> 0 : blk.bytes.length, 0);
    out.push(w, blk.bytes);
    if ((flg & 0x10) !== 0) {
      const c = Buffer.alloc(4);
      c.writeUInt32LE(blk.checksum ?? xxh32(blk.bytes), 0);
      out.push(c);
    }
  }
  out.push(Buffer.alloc(4));
  if ((flg & 0x04) !== 0) {
    const c = Buffer.alloc(4);
    c.writeUInt32LE(spec.contentChecksum ?? xxh32(spec.content ?? Buffer.alloc(0)), 0);
    out.push(c);
  }
  return Buffer.concat(out);
}
