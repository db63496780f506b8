import { fstat, read } from 'node:fs';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';
import { fail } from '../core/errors.js';
import { dbFileFd } from './db-file-cache.js';

const fstatP = promisify(fstat);
const readP = promisify(read);
const CHUNK_BYTES = 1 << 20;

// The length is fixed when the descriptor is obtained: a file that grows meanwhile is read to that length, and
// one that shrinks is read to its new end. Frames re-applied from the WAL settle either case.
async function forEachChunk(dbPath: string, use: (chunk: Buffer) => Promise<void> | void): Promise<number> {
  const fd = dbFileFd(dbPath);
  try {
    const { size } = await fstatP(fd);
    const buf = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK_BYTES, size)));
    let pos = 0;
    while (pos < size) {
      const { bytesRead } = await readP(fd, buf, 0, Math.min(buf.length, size - pos), pos);
      if (bytesRead === 0) break;
      await use(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    return pos;
  } catch (err) {
    throw fail('IO', `cannot read database file ${dbPath}: ${(err as Error).message}`, {
      hint: 'check the disk holding the checkout and its permissions',
      cause: err,
    });
  }
}

/** Copies a live database's main file to dest through the shared never-closed descriptor; returns the bytes copied. */
export async function copyMainFile(dbPath: string, dest: string): Promise<number> {
  const out = await open(dest, 'w');
  try {
    let written = 0;
    const copied = await forEachChunk(dbPath, async (chunk) => {
      let done = 0;
      while (done < chunk.length) {
        const { bytesWritten } = await out.write(chunk, done, chunk.length - done, written + done);
        done += bytesWritten;
      }
      written += chunk.length;
    });
    await out.sync();
    return copied;
  } finally {
    await out.close();
  }
}
