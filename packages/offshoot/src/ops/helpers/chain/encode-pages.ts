import { CHECKSUM_FLAG } from '../../../ltx/checksum.js';
import { LtxEncoder, encodeSegment } from '../../../ltx/encoder.js';
import { offshootHeader } from '../../../ltx/header.js';
import type { Geometry, PageSource } from '../../../sqlite/page-scan.js';
import { pagesOf, selectedPagesOf } from '../../../sqlite/page-scan.js';

/** What to encode from a page source: a full snapshot at txid, or a segment of the listed pages. */
export type EncodePlan =
  | { kind: 'snapshot'; txid: number }
  | { kind: 'segment'; txid: number; pages: readonly number[]; preApplyChecksum: bigint };

/** Encodes every page of src as the snapshot of txid into out; returns its size. */
export async function encodeSnapshotPages(
  src: PageSource,
  g: Geometry,
  txid: number,
  postApplyChecksum: bigint,
  out: string,
  timestamp: number,
): Promise<number> {
  const enc = await LtxEncoder.create(
    out,
    offshootHeader({
      pageSize: g.pageSize,
      commit: g.pageCount,
      minTxid: 1,
      maxTxid: txid,
      timestamp,
      preApplyChecksum: 0n,
    }),
  );
  try {
    for (const [pgno, data] of pagesOf(src, g)) await enc.writePage(pgno, data);
    return (await enc.finish(postApplyChecksum)).size;
  } catch (err) {
    await enc.abort();
    throw err;
  }
}

/** Encodes pages read from src (a frozen checkout or a private file) into an LTX file at out; returns its size. */
export async function encodePages(
  src: PageSource,
  g: Geometry,
  plan: EncodePlan,
  postApplyChecksum: bigint,
  out: string,
  timestamp: number,
): Promise<number> {
  if (plan.kind === 'snapshot') return encodeSnapshotPages(src, g, plan.txid, postApplyChecksum, out, timestamp);
  const { size } = await encodeSegment(out, {
    pageSize: g.pageSize,
    commit: g.pageCount,
    txid: plan.txid,
    preApplyChecksum: plan.preApplyChecksum | CHECKSUM_FLAG,
    postApplyChecksum,
    pages: selectedPagesOf(src, g, plan.pages),
    timestamp,
  });
  return size;
}
