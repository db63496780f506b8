import type { FileHandle } from 'node:fs/promises';
import type { OffshootError } from '../core/errors.js';

const CHUNK_BYTES = 1 << 20;

/** A run of whole pages read from a file; `data` is valid only until the next iteration. */
export interface PageChunk {
  /** Page number of the first page in `data`. */
  first: number;
  data: Buffer;
}

async function readFully(fh: FileHandle, buf: Buffer, position: number): Promise<boolean> {
  let done = 0;
  while (done < buf.length) {
    const { bytesRead } = await fh.read(buf, done, buf.length - done, position + done);
    if (bytesRead === 0) return false;
    done += bytesRead;
  }
  return true;
}

/**
 * Reads pages from..to (inclusive) of a file in 1 MiB chunks, keeping the next read in flight while the
 * caller works on the current chunk. A file shorter than `to` pages throws `short()`.
 */
export async function* readPageChunks(
  fh: FileHandle,
  pageSize: number,
  from: number,
  to: number,
  short: () => OffshootError,
): AsyncGenerator<PageChunk> {
  const perChunk = Math.max(1, Math.floor(CHUNK_BYTES / pageSize));
  const buffers = [Buffer.allocUnsafe(perChunk * pageSize), Buffer.allocUnsafe(perChunk * pageSize)] as const;
  let turn = 0;
  const start = (first: number): Promise<PageChunk> => {
    const count = Math.min(perChunk, to - first + 1);
    const data = buffers[turn++ % 2]!.subarray(0, count * pageSize);
    const p = readFully(fh, data, (first - 1) * pageSize).then((ok) => {
      if (!ok) throw short();
      return { first, data };
    });
    // The read is awaited on the next iteration; this keeps a failure meanwhile from counting as unhandled.
    p.catch(() => undefined);
    return p;
  };
  let pending = from <= to ? start(from) : undefined;
  try {
    while (pending !== undefined) {
      const chunk = await pending;
      const next = chunk.first + chunk.data.length / pageSize;
      pending = next <= to ? start(next) : undefined;
      yield chunk;
    }
  } finally {
    await pending?.catch(() => undefined);
  }
}
