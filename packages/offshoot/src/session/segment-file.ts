import { copyFile, open } from 'node:fs/promises';
import { CHECKSUM_FLAG } from '../ltx/checksum.js';
import { encodeSegment } from '../ltx/encoder.js';
import { encodeSnapshotPages } from '../ops/live-branch.js';
import { FileSource, geometryOf } from '../sqlite/page-scan.js';
import type { FlushBatch } from './session-sink.js';

/**
 * Encodes a flush batch's changed pages as the segment of txid; returns the file size. The file is staging in the
 * session's scratch: the store's write copies it and fsyncs that copy, so this one is not fsynced.
 */
export async function writeSegment(batch: FlushBatch, txid: number, out: string, timestamp: number): Promise<number> {
  const { size } = await encodeSegment(out, {
    pageSize: batch.pageSize,
    commit: batch.commit,
    txid,
    preApplyChecksum: batch.preApplyChecksum | CHECKSUM_FLAG,
    postApplyChecksum: batch.postApplyChecksum,
    pages: batch.pages,
    timestamp,
    sync: false,
  });
  return size;
}

/**
 * Encodes a snapshot of txid: a private copy of `base` (the last rebase image, or the durable head) with the batch's
 * pages written over it and its length set to the batch's commit. Returns the file size.
 */
export async function writeSnapshot(
  batch: FlushBatch,
  base: string,
  work: string,
  txid: number,
  out: string,
  timestamp: number,
): Promise<number> {
  await copyFile(base, work);
  const fh = await open(work, 'r+');
  try {
    for (const [pgno, data] of batch.pages) await fh.write(data, 0, batch.pageSize, (pgno - 1) * batch.pageSize);
    await fh.truncate(batch.commit * batch.pageSize);
  } finally {
    await fh.close();
  }
  const src = new FileSource(work);
  try {
    return await encodeSnapshotPages(
      src,
      geometryOf(src, src.size, work),
      txid,
      batch.postApplyChecksum,
      out,
      timestamp,
    );
  } finally {
    src.close();
  }
}
