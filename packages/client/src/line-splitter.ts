import { OffshootError } from './errors.js';

/** Splits a byte stream into newline-terminated lines, refusing any line longer than a cap. */
export class LineSplitter {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Feeds one chunk and returns the lines it completed, without their newline. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    // Splitting on the byte 0x0a is safe for UTF-8: it never occurs inside a multi-byte character.
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      this.#take(chunk.subarray(start, nl));
      lines.push(Buffer.concat(this.#pending).toString('utf8'));
      this.#pending = [];
      this.#pendingBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start));
    return lines;
  }

  #take(part: Buffer): void {
    this.#pendingBytes += part.length;
    if (this.#pendingBytes > this.#maxBytes) {
      throw new OffshootError('BAD_RESPONSE', `daemon sent a line longer than ${this.#maxBytes} bytes`, {
        hint: 'check that the socket belongs to an offshoot daemon',
      });
    }
    this.#pending.push(part);
  }
}
