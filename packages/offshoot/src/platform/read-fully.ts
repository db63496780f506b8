import { readSync } from 'node:fs';

/** Reads up to length bytes at offset from fd into buf (looping over short reads); returns the bytes read. */
export function readFully(fd: number, buf: Buffer, offset: number, length: number = buf.length): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, offset + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
