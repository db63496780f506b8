import { CHECKSUM_FLAG } from '../ltx/checksum.js';
import { LtxEncoder } from '../ltx/encoder.js';
import type { Geometry, PageSource } from '../sqlite/page-scan.js';
import { pagesOf, selectedPagesOf } from '../sqlite/page-scan.js';

/** What to encode from a page source: a full snapshot at txid, or a segment of the listed pages. */
export type EncodePlan =
  | { kind: 'snapshot'; txid: number }
  | { kind: 'segment'; txid: number; pages: readonly number[]; preApplyChecksum: bigint };

/** Encodes pages read from src (a frozen checkout or a private file) into an LTX file at out; returns its size. */
export async function encodePages(src: PageSource, g: Geometry, plan: EncodePlan, postApplyChecksum: bigint, out: string, timestamp: number): Promise<number> {
  const snapshot = plan.kind === 'snapshot';
  const enc = await LtxEncoder.create(out, {
    flags: 0,
    pageSize: g.pageSize,
    commit: g.pageCount,
    minTxid: snapshot ? 1 : plan.txid,
    maxTxid: plan.txid,
    timestamp,
    preApplyChecksum: snapshot ? 0n : plan.preApplyChecksum | CHECKSUM_FLAG,
    walOffset: 0,
    walSize: 0,
    walSalt1: 0,
    walSalt2: 0,
    nodeId: 0,
  });
  try {
    const pages = snapshot ? pagesOf(src, g) : selectedPagesOf(src, g, plan.pages);
    for (const [pgno, data] of pages) await enc.writePage(pgno, data);
    const { size } = await enc.finish(postApplyChecksum);
    return size;
  } catch (err) {
    await enc.abort();
    throw err;
  }
}
