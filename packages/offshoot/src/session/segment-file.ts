import { copyFile, open } from 'node:fs/promises';
import { CHECKSUM_FLAG } from '../ltx/checksum.js';
import { LtxEncoder } from '../ltx/encoder.js';
import { FileSource, geometryOf, pagesOf } from '../sqlite/page-scan.js';
import type { FlushBatch } from './session-sink.js';

function header(batch: FlushBatch, minTxid: number, txid: number, timestamp: number, preApply: bigint) {
  return {
    flags: 0,
    pageSize: batch.pageSize,
    commit: batch.commit,
    minTxid,
    maxTxid: txid,
    timestamp,
    preApplyChecksum: preApply,
    walOffset: 0,
    walSize: 0,
    walSalt1: 0,
    walSalt2: 0,
    nodeId: 0,
  };
}

/** Encodes a flush batch's changed pages as the segment of txid; returns the file size. */
export async function writeSegment(batch: FlushBatch, txid: number, out: string, timestamp: number): Promise<number> {
  const enc = await LtxEncoder.create(out, header(batch, txid, txid, timestamp, batch.preApplyChecksum | CHECKSUM_FLAG));
  try {
    for (const [pgno, data] of batch.pages) await enc.writePage(pgno, data);
    return (await enc.finish(batch.postApplyChecksum)).size;
  } catch (err) {
    await enc.abort();
    throw err;
  }
}

/**
 * Encodes a snapshot of txid: a private copy of `base` (the last rebase image, or the durable head) with the batch's
 * pages written over it and its length set to the batch's commit. Returns the file size.
 */
export async function writeSnapshot(batch: FlushBatch, base: string, work: string, txid: number, out: string, timestamp: number): Promise<number> {
  await copyFile(base, work);
  const fh = await open(work, 'r+');
  try {
    for (const [pgno, data] of batch.pages) await fh.write(data, 0, batch.pageSize, (pgno - 1) * batch.pageSize);
    await fh.truncate(batch.commit * batch.pageSize);
  } finally {
    await fh.close();
  }
  const src = new FileSource(work);
  const enc = await LtxEncoder.create(out, header(batch, 1, txid, timestamp, 0n));
  try {
    for (const [pgno, data] of pagesOf(src, geometryOf(src, src.size, work))) await enc.writePage(pgno, data);
    return (await enc.finish(batch.postApplyChecksum)).size;
  } catch (err) {
    await enc.abort();
    throw err;
  } finally {
    src.close();
  }
}
