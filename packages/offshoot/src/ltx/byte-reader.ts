import type { Readable } from 'node:stream';
import { asOffshootError, fail } from '../core/errors.js';

/** Where LTX bytes come from: a Node stream or any async iterable of byte chunks (never modified once yielded). */
export type ByteSource = Readable | AsyncIterable<Uint8Array>;

const EMPTY = Buffer.alloc(0);

/**
 * Exact-length reads over a chunked byte source. It pulls chunks only as far as a read needs, so a
 * reader never consumes bytes past what the format says belongs to the current item.
 */
export class ByteReader {
  private readonly it: AsyncIterator<unknown>;
  private buf: Buffer = EMPTY;
  private pos = 0;
  /** Absolute offset of buf[0] in the source. */
  private bufStart = 0;
  private ended = false;

  constructor(source: ByteSource) {
    this.it = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  }

  /** Number of bytes consumed so far. */
  get position(): number {
    return this.bufStart + this.pos;
  }

  /** The next non-empty chunk of the source, or undefined at its end. */
  private async next(): Promise<Buffer | undefined> {
    while (!this.ended) {
      let r: IteratorResult<unknown>;
      try {
        r = await this.it.next();
      } catch (err) {
        this.ended = true;
        throw asOffshootError(err);
      }
      if (r.done === true) {
        this.ended = true;
        break;
      }
      const chunk = toBuffer(r.value);
      if (chunk.length > 0) return chunk;
    }
    return undefined;
  }

  /**
   * Reads exactly `n` bytes; a short source is CORRUPT. Within one chunk the result is a view of it;
   * across chunks only the `n` bytes are copied, so large chunks are never re-concatenated.
   */
  async read(n: number, what: string): Promise<Buffer> {
    const avail = this.buf.length - this.pos;
    if (avail >= n) {
      const view = this.buf.subarray(this.pos, this.pos + n);
      this.pos += n;
      return view;
    }
    const start = this.position;
    const out = Buffer.allocUnsafe(n);
    this.buf.copy(out, 0, this.pos);
    let got = avail;
    this.bufStart += this.buf.length;
    this.buf = EMPTY;
    this.pos = 0;
    while (got < n) {
      const chunk = await this.next();
      if (chunk === undefined) {
        throw fail('CORRUPT', `LTX file truncated: ${what} at offset ${start} needs ${n} bytes, ${got} left`, {
          hint: 'the LTX file is incomplete; re-fetch or re-create it',
        });
      }
      const take = Math.min(n - got, chunk.length);
      chunk.copy(out, got, 0, take);
      got += take;
      if (take < chunk.length) {
        this.buf = chunk;
        this.pos = take;
      } else {
        this.bufStart += chunk.length;
      }
    }
    return out;
  }

  /**
   * The unread bytes of the current chunk, without consuming them (possibly empty): lets a caller parse items that
   * lie wholly inside the chunk synchronously and take them with skip(), falling back to read() at chunk seams.
   */
  peek(): Buffer {
    return this.buf.subarray(this.pos);
  }

  /** Consumes `n` bytes already returned by peek(). */
  skip(n: number): void {
    this.pos += n;
  }

  /** True when the source has no more bytes. */
  async atEnd(): Promise<boolean> {
    if (this.pos < this.buf.length) return false;
    const chunk = await this.next();
    if (chunk === undefined) return true;
    this.bufStart += this.buf.length;
    this.buf = chunk;
    this.pos = 0;
    return false;
  }

  /** Releases the source (destroys a stream) without reading the rest. */
  async close(): Promise<void> {
    this.buf = EMPTY;
    this.pos = 0;
    if (this.ended) return;
    this.ended = true;
    try {
      await this.it.return?.();
    } catch {
      // The source is being abandoned; an error while tearing it down changes nothing for the caller.
    }
  }
}

function toBuffer(v: unknown): Buffer {
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  throw fail('INVALID_ARGUMENT', 'LTX source yielded a non-binary chunk', {
    hint: 'read LTX data as bytes (no stream encoding)',
  });
}
