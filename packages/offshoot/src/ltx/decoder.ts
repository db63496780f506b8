import { createReadStream } from 'node:fs';
import { fail } from '../core/errors.js';
import { ByteReader, type ByteSource } from './byte-reader.js';
import {
  CHECKSUM_FLAG,
  Crc64,
  EMPTY_DB_CHECKSUM,
  foldPage,
  lockPgno,
  pageChecksumFromRaw,
  pageRaw,
} from './checksum.js';
import type { Register } from './crc64.js';
import { HEADER_SIZE, decodeHeader, hasNoChecksum, isSnapshot, type LtxHeader } from './header.js';
import { parseCommonPageFrame, readPageBlock, readPageFrame } from './lz4-frame.js';
import { PageIndex } from './page-index.js';

/** One decoded page, with where its frame sits in the file. */
export interface LtxPage {
  pgno: number;
  data: Buffer;
  /** File offset of the page's 6-byte page header. */
  offset: number;
  /** Encoded size: page header plus compressed body. */
  size: number;
  /** The page's LTX checksum, FLAG | crc64(BE32(pgno) ‖ data), from the decoder's single pass over the page. */
  checksum: bigint;
}

/** How a decoder hands out pages. */
export interface LtxDecoderOptions {
  /**
   * Each page's `data` is valid only until the next page is asked for (one buffer is reused), sparing an
   * allocation per page: for consumers that copy or hash each page at once, as apply does.
   */
  transientPages?: boolean;
}

/** The 16-byte LTX trailer. */
export interface LtxTrailer {
  postApplyChecksum: bigint;
  fileChecksum: bigint;
}

/** Page header flag of v0.5.2+: a BE u32 size and a raw LZ4 block follow instead of an LZ4 frame. */
const PAGE_FLAG_SIZE = 0x0001;
const PAGE_HEADER_SIZE = 6;
const TRAILER_SIZE = 16;
const READ_CHUNK = 4 << 20;
const HINT = 'the LTX file is damaged; re-fetch or re-create it';

function corrupt(msg: string): never {
  throw fail('CORRUPT', msg, { hint: HINT });
}

type State = 'fresh' | 'header' | 'pages' | 'done' | 'failed';

/**
 * Streaming LTX decoder: header(), then pages(), then trailer(). Every check of LTX v0.5.1 applies, plus
 * offshoot's: pages strictly ascending (snapshots complete, lock page skipped), pgno ≤ commit, a page index
 * that matches the pages read, no bytes after the trailer, and for snapshots the rolling checksum.
 */
export class LtxDecoder {
  private readonly reader: ByteReader;
  private readonly fileCrc = new Crc64();
  private readonly index = new PageIndex();
  private hdr: LtxHeader | undefined;
  private trl: LtxTrailer | undefined;
  private state: State = 'fresh';
  private readonly transient: boolean;

  constructor(source: ByteSource, opts: LtxDecoderOptions = {}) {
    this.reader = new ByteReader(source);
    this.transient = opts.transientPages === true;
  }

  /** Reads and validates the header (once; later calls return the same header). */
  async header(): Promise<LtxHeader> {
    if (this.hdr !== undefined) return this.hdr;
    if (this.state !== 'fresh')
      throw fail('INVALID_ARGUMENT', 'LTX decoder already failed', { hint: 'open a new decoder' });
    try {
      const raw = await this.reader.read(HEADER_SIZE, 'header');
      this.hdr = decodeHeader(raw);
      this.fileCrc.update(raw);
      this.state = 'header';
      return this.hdr;
    } catch (err) {
      await this.abandon();
      throw err;
    }
  }

  /** Yields every page in file order, then verifies the end marker, page index, trailer and checksums. */
  async *pages(): AsyncGenerator<LtxPage> {
    const h = await this.header();
    if (this.state !== 'header')
      throw fail('INVALID_ARGUMENT', 'LTX pages can be read only once', { hint: 'open a new decoder' });
    this.state = 'pages';
    const r = this.reader;
    const snapshot = isSnapshot(h);
    const verifyRolling = snapshot && !hasNoChecksum(h);
    const lock = lockPgno(h.pageSize);
    let rolling = EMPTY_DB_CHECKSUM;
    let last = 0;
    try {
      const raw: Register = { lo: 0, hi: 0 };
      const scratch = this.transient ? Buffer.allocUnsafe(h.pageSize) : undefined;
      for (;;) {
        // Pages wholly inside the current chunk are parsed synchronously; only chunk seams take the async reads.
        if (r.peek().length === 0) await r.atEnd();
        const offset = r.position;
        const view = r.peek();
        let ph: Buffer;
        if (view.length >= PAGE_HEADER_SIZE) {
          ph = view.subarray(0, PAGE_HEADER_SIZE);
          r.skip(PAGE_HEADER_SIZE);
        } else {
          ph = await r.read(PAGE_HEADER_SIZE, 'page header');
        }
        const pgno = ph.readUInt32BE(0);
        const flags = ph.readUInt16BE(4);
        if (pgno === 0) {
          if (flags !== 0) corrupt(`end-of-pages marker at offset ${offset} has flags 0x${flags.toString(16)}`);
          this.fileCrc.update(ph);
          break;
        }
        if (flags !== 0 && flags !== PAGE_FLAG_SIZE) corrupt(`page ${pgno} has unknown flags 0x${flags.toString(16)}`);
        if (pgno > h.commit) corrupt(`page ${pgno} is beyond the commit size ${h.commit}`);
        if (pgno === lock) corrupt(`page ${pgno} is the lock page and may not be stored`);
        if (snapshot) {
          const want = last + 1 === lock ? last + 2 : last + 1;
          if (pgno !== want) corrupt(`snapshot page ${pgno} out of sequence (expected ${want})`);
        } else if (pgno <= last) {
          corrupt(`page ${pgno} out of order after page ${last}`);
        }
        last = pgno;
        // One CRC pass over the page serves both the file checksum and the page checksum (CRC linearity); on the
        // fast path it comes with the frame's content checksum.
        let data: Buffer;
        if (flags === PAGE_FLAG_SIZE) {
          const { sizeField, page } = await readPageBlock(r, h.pageSize);
          this.fileCrc.update(ph, sizeField);
          data = page;
          pageRaw(data, raw);
        } else {
          const fast = parseCommonPageFrame(r.peek(), h.pageSize, scratch, raw);
          if (fast !== undefined) {
            r.skip(fast.length);
            data = fast.page;
          } else {
            data = await readPageFrame(r, h.pageSize);
            pageRaw(data, raw);
          }
          this.fileCrc.update(ph);
        }
        this.fileCrc.appendRaw(raw, h.pageSize);
        const checksum = pageChecksumFromRaw(pgno, raw, h.pageSize);
        const size = r.position - offset;
        this.index.add(pgno, offset, size);
        if (verifyRolling) rolling = foldPage(rolling, checksum);
        yield { pgno, data, offset, size, checksum };
      }
      if (snapshot && h.commit > 0 && last !== h.commit && !(h.commit === lock && last === lock - 1)) {
        corrupt(`snapshot ends at page ${last} but commit is ${h.commit}`);
      }
      await this.readTail(h, verifyRolling ? rolling : undefined);
    } catch (err) {
      await this.abandon();
      throw err;
    } finally {
      if (this.state === 'pages') await this.abandon();
    }
  }

  /** Reads the index and trailer, checks them against what was decoded, and requires the end of input. */
  private async readTail(h: LtxHeader, rolling: bigint | undefined): Promise<void> {
    const r = this.reader;
    const expected = this.index.encode();
    const idx = await r.read(expected.length, 'page index');
    if (!idx.equals(expected)) corrupt('page index does not match the pages in the file');
    const trailer = await r.read(TRAILER_SIZE, 'trailer');
    if (!(await r.atEnd())) corrupt('unexpected bytes after the LTX trailer');
    const postApplyChecksum = trailer.readBigUInt64BE(0);
    const fileChecksum = trailer.readBigUInt64BE(8);
    const computed = CHECKSUM_FLAG | this.fileCrc.update(idx, trailer.subarray(0, 8)).digest();
    if (computed !== fileChecksum) {
      throw fail(
        'CHECKSUM_MISMATCH',
        `LTX file checksum mismatch: trailer ${hex(fileChecksum)}, computed ${hex(computed)}`,
        { hint: HINT },
      );
    }
    if (hasNoChecksum(h)) {
      if (postApplyChecksum !== 0n) corrupt('no-checksum file carries a post-apply checksum');
    } else if ((postApplyChecksum & CHECKSUM_FLAG) === 0n) {
      corrupt('post-apply checksum must be non-zero with bit 63 set');
    } else if (h.commit === 0 && postApplyChecksum !== EMPTY_DB_CHECKSUM) {
      corrupt('an empty database must have the empty post-apply checksum');
    }
    if (rolling !== undefined && rolling !== postApplyChecksum) {
      throw fail(
        'CHECKSUM_MISMATCH',
        `snapshot pages checksum to ${hex(rolling)} but the trailer says ${hex(postApplyChecksum)}`,
        { hint: HINT },
      );
    }
    this.trl = { postApplyChecksum, fileChecksum };
    this.state = 'done';
    await r.close();
  }

  /** The verified trailer; available once pages() has run to completion. */
  trailer(): LtxTrailer {
    if (this.trl === undefined) {
      throw fail('INVALID_ARGUMENT', 'the LTX trailer is known only after every page was read', {
        hint: 'iterate pages() to the end first',
      });
    }
    return this.trl;
  }

  /** Releases the source early (e.g. after rejecting the header). */
  async close(): Promise<void> {
    if (this.state !== 'done') await this.abandon();
  }

  private async abandon(): Promise<void> {
    this.state = 'failed';
    await this.reader.close();
  }
}

function hex(v: bigint): string {
  return v.toString(16).padStart(16, '0');
}

/** A decoder over a file, read in 4 MiB chunks. */
export function openLtxFile(path: string, opts: LtxDecoderOptions = {}): LtxDecoder {
  return new LtxDecoder(createReadStream(path, { highWaterMark: READ_CHUNK }), opts);
}

/** A fully decoded and verified LTX file, pages in memory: for small files and tests. */
export interface DecodedLtx {
  header: LtxHeader;
  pages: LtxPage[];
  trailer: LtxTrailer;
}

/** Decodes and verifies a whole LTX file, keeping its pages in memory. */
export async function decodeFile(path: string): Promise<DecodedLtx> {
  return decodeAll(openLtxFile(path));
}

/** Runs a decoder to completion, collecting its pages. */
export async function decodeAll(decoder: LtxDecoder): Promise<DecodedLtx> {
  const header = await decoder.header();
  const pages: LtxPage[] = [];
  for await (const p of decoder.pages()) pages.push(p);
  return { header, pages, trailer: decoder.trailer() };
}
