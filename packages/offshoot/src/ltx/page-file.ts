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
 * Page-addressed I/O on a database file. Writes of consecutive pages are gathered into runs of up to 1 MiB, so a
 * snapshot lands in large sequential writes, and a run's write stays in flight while the next run fills (decoding
 * overlaps writing); reads see every write made before them.
 */
export class PageFile {
  private run: Buffer;
  private spare: Buffer;
  private runStart = 0;
  private runPages = 0;
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
    const contiguous = this.runPages > 0 && pgno === this.runStart + this.runPages;
    if (this.runPages > 0 && (!contiguous || (this.runPages + 1) * this.pageSize > this.run.length)) await this.send();
    if (this.runPages === 0) this.runStart = pgno;
    this.run.set(data, this.runPages * this.pageSize);
    this.runPages++;
  }

  /** Starts writing the queued run (after the previous one finished) and swaps buffers; the write stays in flight. */
  private async send(): Promise<void> {
    await this.settle();
    if (this.runPages === 0) return;
    const bytes = this.run.subarray(0, this.runPages * this.pageSize);
    const base = (this.runStart - 1) * this.pageSize;
    [this.run, this.spare] = [this.spare, this.run];
    this.runPages = 0;
    const p = writeAll(this.fh, bytes, base);
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

  /** Reads page `pgno` into a fresh buffer; a page missing from the file is CORRUPT. */
  async read(pgno: number): Promise<Buffer> {
    if (this.runPages > 0 && pgno >= this.runStart && pgno < this.runStart + this.runPages) await this.flush();
    else await this.settle();
    const page = Buffer.allocUnsafe(this.pageSize);
    const { bytesRead } = await this.fh.read(page, 0, this.pageSize, (pgno - 1) * this.pageSize);
    if (bytesRead !== this.pageSize) {
      throw fail('CORRUPT', `database file ends before page ${pgno}`, {
        hint: 'the database copy is incomplete; rebuild it from its chain',
      });
    }
    return page;
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
