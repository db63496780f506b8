import type { FileHandle } from 'node:fs/promises';

/** The largest read: large enough that a 256 MiB object takes few thread-pool trips. */
export const STREAM_CHUNK = 1024 * 1024;

/**
 * The first read's size. Reads grow from here to STREAM_CHUNK, so a ref or a small segment costs one small buffer:
 * a MiB per read of a 500-byte file is external memory the garbage collector counts, and a daemon doing thousands of
 * such reads ran a full collection nearly every episode.
 */
const FIRST_CHUNK = 16 * 1024;

/**
 * Reads the open file from offset 0 to its end, awaiting onChunk on each piece in order, and returns the byte count.
 * One buffer is reused: a chunk is valid only until onChunk's promise settles. With `sequential` it reads from the
 * handle's own position instead, which is what a pipe or FIFO allows.
 */
export async function forEachChunk(
  handle: FileHandle,
  onChunk: (chunk: Buffer) => void | Promise<void>,
  { sequential = false }: { sequential?: boolean } = {},
): Promise<number> {
  let buf = Buffer.allocUnsafe(FIRST_CHUNK);
  let pos = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, buf.length, sequential ? null : pos);
    // Only a zero-byte read is the end: a short read is taken at its word and the next read continues after it.
    if (bytesRead === 0) return pos;
    await onChunk(buf.subarray(0, bytesRead));
    pos += bytesRead;
    if (bytesRead === buf.length && buf.length < STREAM_CHUNK)
      buf = Buffer.allocUnsafe(Math.min(STREAM_CHUNK, buf.length * 8));
  }
}

/** Appends every byte of chunk to handle at its current position, continuing short writes. */
export async function writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  for (let off = 0; off < chunk.length; ) off += (await handle.write(chunk, off, chunk.length - off)).bytesWritten;
}

/** The read size for a stream over a file of this many bytes: the whole file, up to STREAM_CHUNK. */
export function streamChunkFor(size: number): number {
  return Math.max(1, Math.min(STREAM_CHUNK, size));
}
