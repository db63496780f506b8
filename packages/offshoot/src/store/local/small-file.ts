import { closeSync, openSync, readSync } from 'node:fs';
import { withFileRoom } from '../../platform/file-room.js';

// Most objects read this way (refs, base pointers) fit in one read of this size. Reads are synchronous, so one
// scratch buffer serves them all; each result is copied out at its exact size (holding nothing of the scratch).
const SCRATCH = Buffer.allocUnsafe(16 * 1024);

/**
 * A small file's whole content, read synchronously: open, read until a short read, close. readFileSync also stats the
 * file first; a short read of a regular file is its end, so that stat is a system call per file saved.
 */
export function readSmallFileSync(path: string): Buffer {
  const fd = withFileRoom(() => openSync(path, 'r'));
  try {
    const chunks: Buffer[] = [];
    for (;;) {
      const n = readSync(fd, SCRATCH, 0, SCRATCH.length, null);
      chunks.push(Buffer.from(SCRATCH.subarray(0, n)));
      if (n < SCRATCH.length) return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * A file's whole content when it fits in one read of the scratch buffer, read synchronously; undefined when it may
 * be larger, for the caller to read off the event loop. A short read of a regular file is its end.
 */
export function readIfSmallSync(path: string): Buffer | undefined {
  const fd = withFileRoom(() => openSync(path, 'r'));
  try {
    const n = readSync(fd, SCRATCH, 0, SCRATCH.length, null);
    return n < SCRATCH.length ? Buffer.from(SCRATCH.subarray(0, n)) : undefined;
  } finally {
    closeSync(fd);
  }
}
