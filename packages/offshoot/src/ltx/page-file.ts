import type { FileHandle } from 'node:fs/promises';
import { fail } from '../core/errors.js';
import { readPageChunks } from './page-chunks.js';

const RUN_BYTES = 1 << 20;

async function writeAll(fh: FileHandle, bytes: Buffer, base: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, base + done);
    done += bytesWritten;
  }
}

/**
 * Page-addressed I/O on a database file. Written pages are gathered into batches of up to 1 MiB: consecutive pages
 * become one large sequential write, and the scattered pages of a segment go out as one set of concurrent writes
 * rather than one round trip each. A batch holds strictly ascending pages (so its writes never overlap), and its
 * writes stay in flight while the next batch fills (decoding overlaps writing).
 */
export class PageFile {
  private run: Buffer;
  private spare: Buffer;
  private runPages = 0;
  /** The batch's contiguous pieces, flattened: first page, page count, first page, page count, ... */
  private pieces: number[] = [];
  private sparePieces: number[] = [];
  private inflight: Promise<void> | undefined;

  constructor(
    private readonly fh: FileHandle,
    /** Bytes per page. */
    readonly pageSize: number,
  ) {
    this.run = Buffer.allocUnsafe(Math.max(RUN_BYTES, pageSize));
    this.spare = Buffer.allocUnsafe(this.run.length);
  }

  /** Queues page `pgno`; the bytes are copied, so the caller may reuse `data`. */
  async write(pgno: number, data: Uint8Array): Promise<void> {
    const n = this.pieces.length;
    const lastStart = n > 0 ? (this.pieces[n - 2] as number) : 0;
    const lastEnd = n > 0 ? lastStart + (this.pieces[n - 1] as number) : 0;
    if (this.runPages > 0 && (pgno < lastEnd || (this.runPages + 1) * this.pageSize > this.run.length)) {
      await this.send();
    }
    if (this.pieces.length > 0 && pgno === lastEnd) {
      this.pieces[this.pieces.length - 1] = (this.pieces[this.pieces.length - 1] as number) + 1;
    } else {
      this.pieces.push(pgno, 1);
    }
    this.run.set(data, this.runPages * this.pageSize);
    this.runPages++;
  }

  /** Starts writing the queued batch (after the previous one finished) and swaps buffers; the writes stay in flight. */
  private async send(): Promise<void> {
    await this.settle();
    if (this.runPages === 0) return;
    const bytes = this.run;
    const pieces = this.pieces;
    [this.run, this.spare] = [this.spare, this.run];
    this.pieces = this.sparePieces;
    this.pieces.length = 0;
    this.sparePieces = pieces;
    this.runPages = 0;
    const writes: Promise<void>[] = [];
    for (let i = 0, at = 0; i < pieces.length; i += 2) {
      const first = pieces[i] as number;
      const count = pieces[i + 1] as number;
      const part = bytes.subarray(at * this.pageSize, (at + count) * this.pageSize);
      writes.push(writeAll(this.fh, part, (first - 1) * this.pageSize));
      at += count;
    }
    const p = writes.length === 1 ? (writes[0] as Promise<void>) : Promise.all(writes).then(() => undefined);
    // Awaited by the next send() or settle(); this keeps a failure meanwhile from counting as unhandled.
    p.catch(() => undefined);
    this.inflight = p;
  }

  private async settle(): Promise<void> {
    const p = this.inflight;
    this.inflight = undefined;
    await p;
  }

  /** Writes out queued pages and waits for every write. */
  async flush(): Promise<void> {
    await this.send();
    await this.settle();
  }

  /** Calls `fn` for each page from..to (inclusive), reading 1 MiB at a time. */
  async scan(from: number, to: number, fn: (pgno: number, data: Buffer) => void): Promise<void> {
    await this.flush();
    const short = () =>
      fail('CORRUPT', `database file ends before page ${to}`, {
        hint: 'the database copy is incomplete; rebuild it from its chain',
      });
    for await (const { first, data } of readPageChunks(this.fh, this.pageSize, from, to, short)) {
      for (let off = 0, pgno = first; off < data.length; off += this.pageSize, pgno++)
        fn(pgno, data.subarray(off, off + this.pageSize));
    }
  }

  /** Sets the file to exactly `pages` pages (truncating, or extending with zeros). */
  async resize(pages: number): Promise<void> {
    await this.flush();
    await this.fh.truncate(pages * this.pageSize);
  }
}
