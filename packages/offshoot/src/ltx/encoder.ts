import { open, rm, type FileHandle } from 'node:fs/promises';
import { asOffshootError, fail, type OffshootError } from '../core/errors.js';
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
import { assertWalEmpty, readDbGeometry } from './db-file.js';
import { encodeHeader, hasNoChecksum, isSnapshot, offshootHeader, type LtxHeader } from './header.js';
import { encodePageFrame } from './lz4-frame.js';
import { readPageChunks } from './page-chunks.js';
import { PageIndex } from './page-index.js';

const WRITE_CHUNK = 1 << 20;
/** The buffer's first size; it grows to WRITE_CHUNK before anything is written, so a small segment never takes a MiB. */
const FIRST_CHUNK = 64 * 1024;
const END_OF_PAGES = Buffer.alloc(6);

type State = 'open' | 'busy' | 'done' | 'aborted';

function misuse(msg: string, hint: string): never {
  throw fail('INVALID_ARGUMENT', msg, { hint });
}

/**
 * Streams one LTX v0.5.1 file to disk through a buffer of up to 1 MiB: create(), writePage() per page in order,
 * then finish() (or abort()). It enforces every v0.5.1 encoder rule; await each call before the next.
 */
export class LtxEncoder {
  private out: Buffer = Buffer.allocUnsafe(FIRST_CHUNK);
  /** The buffer filled while out is being written: allocated at the first flush, which only a large file reaches. */
  private spare: Buffer | undefined;
  private outLen = 0;
  /** The previous buffer's write, left running while the next buffer fills. */
  private inflight: Promise<void> | undefined;
  private flushed = 0;
  private last = 0;
  private rolling = EMPTY_DB_CHECKSUM;
  private readonly crc = new Crc64();
  private readonly index = new PageIndex();
  private readonly pageHeader = Buffer.alloc(6);
  private readonly raw: Register = { lo: 0, hi: 0 };
  private readonly lock: number;
  private readonly snapshot: boolean;
  private state: State = 'open';

  private constructor(
    private readonly fh: FileHandle,
    /** Path of the file being written. */
    readonly path: string,
    /** The header written at the start of the file. */
    readonly header: Readonly<LtxHeader>,
  ) {
    this.lock = lockPgno(header.pageSize);
    this.snapshot = isSnapshot(header);
  }

  /** Validates the header and opens (truncating) the output file. */
  static async create(path: string, header: LtxHeader): Promise<LtxEncoder> {
    const bytes = encodeHeader(header);
    let fh: FileHandle;
    try {
      fh = await open(path, 'w');
    } catch (err) {
      throw asOffshootError(err);
    }
    const enc = new LtxEncoder(fh, path, { ...header });
    bytes.copy(enc.out, 0);
    enc.outLen = bytes.length;
    enc.crc.update(bytes);
    return enc;
  }

  /** Rolling checksum of the pages written so far (snapshots only: segments do not hold every page). */
  get rollingChecksum(): bigint {
    if (!this.snapshot)
      misuse('a segment has no rolling checksum of its own', 'compute it from the database the segment applies to');
    return this.rolling;
  }

  /** Appends one page; pages must come in the order the file's kind requires. */
  async writePage(pgno: number, data: Uint8Array): Promise<void> {
    this.assertIdle();
    this.checkPage(pgno, data);
    this.state = 'busy';
    await this.guard(async () => {
      const frame = encodePageFrame(data);
      this.pageHeader.writeUInt32BE(pgno, 0);
      const offset = this.position;
      await this.put(this.pageHeader);
      await this.put(frame);
      // One CRC pass over the page serves the file checksum and, for snapshots, the page checksum.
      pageRaw(data, this.raw);
      this.crc.update(this.pageHeader).appendRaw(this.raw, data.length);
      this.index.add(pgno, offset, this.pageHeader.length + frame.length);
      if (this.snapshot) this.rolling = foldPage(this.rolling, pageChecksumFromRaw(pgno, this.raw, data.length));
      this.last = pgno;
    });
    this.state = 'open';
  }

  private checkPage(pgno: number, data: Uint8Array): void {
    const h = this.header;
    const hint =
      'write pages 1..commit in order (skipping the lock page) for a snapshot, strictly ascending for a segment';
    if (!Number.isInteger(pgno) || pgno < 1) misuse(`invalid page number ${pgno}`, hint);
    if (pgno > h.commit) misuse(`page ${pgno} is beyond the commit size ${h.commit}`, hint);
    if (pgno === this.lock) misuse(`page ${pgno} is the lock page and is never stored`, hint);
    if (data.length !== h.pageSize)
      misuse(
        `page ${pgno} is ${data.length} bytes, not ${h.pageSize}`,
        'pass exactly one page of the header page size',
      );
    if (this.snapshot) {
      const want = this.last + 1 === this.lock ? this.last + 2 : this.last + 1;
      if (pgno !== want) misuse(`snapshot page ${pgno} out of sequence (expected ${want})`, hint);
    } else if (pgno <= this.last) {
      misuse(`page ${pgno} is not above the previous page ${this.last}`, hint);
    }
  }

  /**
   * Writes end marker, page index and trailer, then fsyncs (unless `sync` is false: a staging file that a durable
   * write copies elsewhere) and closes the file.
   */
  async finish(
    postApplyChecksum: bigint,
    { sync = true }: { sync?: boolean } = {},
  ): Promise<{ fileChecksum: bigint; size: number }> {
    this.assertIdle();
    this.checkTrailer(postApplyChecksum);
    this.state = 'busy';
    return this.guard(async () => {
      const idx = this.index.encode();
      const trailer = Buffer.alloc(16);
      trailer.writeBigUInt64BE(postApplyChecksum, 0);
      const fileChecksum = CHECKSUM_FLAG | this.crc.update(END_OF_PAGES, idx, trailer.subarray(0, 8)).digest();
      trailer.writeBigUInt64BE(fileChecksum, 8);
      await this.put(END_OF_PAGES);
      await this.put(idx);
      await this.put(trailer);
      await this.flush();
      await this.settle();
      const size = this.flushed;
      if (sync) await this.fh.sync();
      await this.fh.close();
      this.state = 'done';
      return { fileChecksum, size };
    });
  }

  private checkTrailer(postApplyChecksum: bigint): void {
    const h = this.header;
    const hint = 'pass the rolling checksum of the database after this file applies';
    if (typeof postApplyChecksum !== 'bigint' || postApplyChecksum < 0n || postApplyChecksum >= 1n << 64n)
      misuse('post-apply checksum out of range', hint);
    if (hasNoChecksum(h)) {
      if (postApplyChecksum !== 0n) misuse('a no-checksum file must have a zero post-apply checksum', hint);
    } else if ((postApplyChecksum & CHECKSUM_FLAG) === 0n) {
      misuse('post-apply checksum must be non-zero with bit 63 set', hint);
    } else if (h.commit === 0 && postApplyChecksum !== EMPTY_DB_CHECKSUM) {
      misuse('an empty database has the post-apply checksum 0x8000000000000000', hint);
    }
    if (
      this.snapshot &&
      h.commit > 0 &&
      this.last !== h.commit &&
      !(h.commit === this.lock && this.last === this.lock - 1)
    ) {
      misuse(
        `snapshot stops at page ${this.last} of ${h.commit}`,
        'a snapshot holds every page 1..commit except the lock page',
      );
    }
    if (this.snapshot && !hasNoChecksum(h) && postApplyChecksum !== this.rolling) {
      misuse('post-apply checksum does not match the snapshot pages', hint);
    }
  }

  /** Closes and removes the partial file; safe to call at any point, more than once. */
  async abort(): Promise<void> {
    if (this.state === 'done' || this.state === 'aborted') return;
    this.state = 'aborted';
    await this.inflight?.catch(() => undefined);
    await this.fh.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }

  private get position(): number {
    return this.flushed + this.outLen;
  }

  private assertIdle(): void {
    if (this.state === 'busy')
      misuse('LTX encoder call while another is in flight', 'await each writePage() before the next');
    if (this.state !== 'open') misuse(`LTX encoder is ${this.state}`, 'create a new encoder');
  }

  /** Runs an I/O step; a failure leaves no partial file behind. */
  private async guard<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      this.state = 'open';
      await this.abort();
      throw asOffshootError(err);
    }
  }

  private async put(bytes: Uint8Array): Promise<void> {
    if (this.outLen + bytes.length > this.out.length && this.out.length < WRITE_CHUNK) this.grow();
    if (this.outLen + bytes.length > this.out.length) await this.flush();
    if (bytes.length > this.out.length) {
      await this.settle();
      await writeAll(this.fh, bytes, this.flushed);
      this.flushed += bytes.length;
      return;
    }
    this.out.set(bytes, this.outLen);
    this.outLen += bytes.length;
  }

  /** Replaces the buffer (not yet written from) with one at the full size, keeping what it holds. */
  private grow(): void {
    const next = Buffer.allocUnsafe(WRITE_CHUNK);
    this.out.copy(next, 0, 0, this.outLen);
    this.out = next;
  }

  /** Starts writing the filled buffer and swaps in the spare one. */
  private async flush(): Promise<void> {
    if (this.outLen === 0) return;
    await this.settle();
    const p = writeAll(this.fh, this.out.subarray(0, this.outLen), this.flushed);
    // Awaited by the next settle(); this keeps a failure meanwhile from counting as unhandled.
    p.catch(() => undefined);
    this.inflight = p;
    this.flushed += this.outLen;
    this.outLen = 0;
    const next = this.spare ?? Buffer.allocUnsafe(this.out.length);
    this.spare = this.out;
    this.out = next;
  }

  /** Waits for the in-flight write, surfacing its error. */
  private async settle(): Promise<void> {
    const p = this.inflight;
    this.inflight = undefined;
    await p;
  }
}

async function writeAll(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

/** Options for a snapshot: its txid, and the header timestamp (default: now). */
export interface SnapshotOptions {
  txid: number;
  timestamp?: number;
}

/**
 * Encodes a quiesced SQLite file as a snapshot (minTxid 1, maxTxid txid, every page but the lock page),
 * reading it in 1 MiB chunks. Refuses (BUSY) a non-empty -wal or a database that changes meanwhile.
 */
export async function encodeSnapshotFromDb(
  dbPath: string,
  outPath: string,
  opts: SnapshotOptions,
): Promise<{ postApplyChecksum: bigint; pageSize: number; commit: number; size: number }> {
  await assertWalEmpty(dbPath);
  let db: FileHandle;
  try {
    db = await open(dbPath, 'r');
  } catch (err) {
    throw asOffshootError(err);
  }
  try {
    const { pageSize, pageCount } = await readDbGeometry(db, dbPath);
    const headBefore = await readHead(db);
    const enc = await LtxEncoder.create(
      outPath,
      offshootHeader({
        pageSize,
        commit: pageCount,
        minTxid: 1,
        maxTxid: opts.txid,
        timestamp: opts.timestamp ?? Date.now(),
        preApplyChecksum: 0n,
      }),
    );
    try {
      const lock = lockPgno(pageSize);
      for await (const { first, data } of readPageChunks(db, pageSize, 1, pageCount, () => changedUnderneath(dbPath))) {
        for (let off = 0, pgno = first; off < data.length; off += pageSize, pgno++) {
          if (pgno !== lock) await enc.writePage(pgno, data.subarray(off, off + pageSize));
        }
      }
      const headAfter = await readHead(db);
      if (!headAfter.equals(headBefore) || (await db.stat()).size !== pageCount * pageSize)
        throw changedUnderneath(dbPath);
      await assertWalEmpty(dbPath);
      const postApplyChecksum = enc.rollingChecksum;
      const { size } = await enc.finish(postApplyChecksum);
      return { postApplyChecksum, pageSize, commit: pageCount, size };
    } catch (err) {
      await enc.abort();
      throw asOffshootError(err);
    }
  } finally {
    await db.close();
  }
}

async function readHead(db: FileHandle): Promise<Buffer> {
  const b = Buffer.alloc(100);
  const { bytesRead } = await db.read(b, 0, 100, 0);
  return b.subarray(0, bytesRead);
}

function changedUnderneath(dbPath: string): OffshootError {
  return fail('BUSY', `${dbPath} changed while it was being encoded`, {
    hint: 'stop writers (or let offshoot capture them) and retry',
    retryable: true,
  });
}

/** What a segment holds: the changed pages (sorted, unique) of one transaction and its checksums. */
export interface SegmentSpec {
  pageSize: number;
  /** Database size in pages after the transaction. */
  commit: number;
  txid: number;
  preApplyChecksum: bigint;
  postApplyChecksum: bigint;
  pages: Iterable<readonly [number, Uint8Array]> | AsyncIterable<readonly [number, Uint8Array]>;
  /** Header timestamp; default now. */
  timestamp?: number;
  /**
   * False for a staging file that is copied into the store by a write that fsyncs its own copy: its own fsync would
   * protect nothing (default true).
   */
  sync?: boolean;
}

/** Encodes a one-transaction segment (minTxid == maxTxid == txid); refuses txid 1, unsorted pages and zero checksums. */
export async function encodeSegment(outPath: string, spec: SegmentSpec): Promise<{ size: number }> {
  if (!Number.isSafeInteger(spec.txid) || spec.txid < 2) {
    misuse(`segment txid must be 2 or more, got ${spec.txid}`, 'txid 1 is always a snapshot; use encodeSnapshotFromDb');
  }
  if (spec.preApplyChecksum === 0n || spec.postApplyChecksum === 0n) {
    misuse(
      'a segment needs non-zero pre- and post-apply checksums',
      'pass the rolling checksums before and after the transaction',
    );
  }
  const enc = await LtxEncoder.create(
    outPath,
    offshootHeader({
      pageSize: spec.pageSize,
      commit: spec.commit,
      minTxid: spec.txid,
      maxTxid: spec.txid,
      timestamp: spec.timestamp ?? Date.now(),
      preApplyChecksum: spec.preApplyChecksum,
    }),
  );
  try {
    for await (const [pgno, data] of spec.pages) await enc.writePage(pgno, data);
    return { size: (await enc.finish(spec.postApplyChecksum, { sync: spec.sync ?? true })).size };
  } catch (err) {
    await enc.abort();
    throw err;
  }
}
