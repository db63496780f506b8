import { fail } from '../../../core/errors.js';
import type { DataObject } from '../../../core/keys.js';
import { lockPgno } from '../../../ltx/checksum.js';
import { LtxDecoder } from '../../../ltx/decoder.js';
import { LtxEncoder } from '../../../ltx/encoder.js';
import { isSnapshot, offshootHeader } from '../../../ltx/header.js';
import type { Store } from '../../../store/store.js';

/** What a merge wrote: the txid span it covers, the pages it carries and the file's size. */
export interface MergedFile {
  minTxid: number;
  maxTxid: number;
  pages: number;
  size: number;
}

function corrupt(msg: string): never {
  throw fail('CORRUPT', msg, { hint: 'the chain is damaged or incomplete; re-resolve it from the store' });
}

/**
 * Encodes the merged segment of contiguous chain segments (oldest first) into `out`: an LTX v0.5.1 segment whose
 * min/max txids span the members, whose pages are their union (later pages win) and whose checksums are the first
 * member's pre-apply and the last member's post-apply. Every member is fully verified as it is read. A shrink inside
 * the span is carried as explicit zero pages where a later grow would otherwise expose the pre-merge bytes, so
 * applying the merged file equals applying the members one by one.
 */
export async function encodeMerged(
  store: Store,
  members: readonly DataObject[],
  out: string,
  timestamp: number,
): Promise<MergedFile> {
  if (members.length < 2) corrupt('a merge needs at least two members');
  const pages = new Map<number, Buffer>();
  let pageSize = 0;
  let firstPre = 0n;
  let lastPost = 0n;
  let commit = 0;
  let lowestCommit = Number.POSITIVE_INFINITY;
  let prevMax = 0;
  for (const [i, m] of members.entries()) {
    const dec = new LtxDecoder(await store.backend.getStream(m.key));
    try {
      const h = await dec.header();
      if (isSnapshot(h)) corrupt(`merge member ${m.key} is a snapshot`);
      if (h.minTxid !== m.minTxid || h.maxTxid !== m.maxTxid) corrupt(`${m.key} holds txids ${h.minTxid}-${h.maxTxid}`);
      if (i === 0) {
        pageSize = h.pageSize;
        firstPre = h.preApplyChecksum;
      } else {
        if (h.pageSize !== pageSize) corrupt(`${m.key} has page size ${h.pageSize}, the merge ${pageSize}`);
        if (h.minTxid !== prevMax + 1) corrupt(`${m.key} does not follow txid ${prevMax}`);
      }
      // Copied: a decoder may hand out views of a buffer it reuses.
      for await (const p of dec.pages()) pages.set(p.pgno, Buffer.from(p.data));
      lastPost = dec.trailer().postApplyChecksum;
      // Every page a member carries is within its commit, so only a shrink can leave pages beyond the new end.
      if (i > 0 && h.commit < commit) for (const pgno of pages.keys()) if (pgno > h.commit) pages.delete(pgno);
      commit = h.commit;
      lowestCommit = Math.min(lowestCommit, commit);
      prevMax = h.maxTxid;
    } finally {
      await dec.close();
    }
  }
  // Pages cut off by a shrink and never written again read as zeros after the members; say so explicitly.
  const lock = lockPgno(pageSize);
  const zeros = Buffer.alloc(pageSize);
  for (let pgno = lowestCommit + 1; pgno <= commit; pgno++)
    if (pgno !== lock && !pages.has(pgno)) pages.set(pgno, zeros);
  const first = members[0] as DataObject;
  const last = members[members.length - 1] as DataObject;
  const enc = await LtxEncoder.create(
    out,
    offshootHeader({
      pageSize,
      commit,
      minTxid: first.minTxid,
      maxTxid: last.maxTxid,
      timestamp,
      preApplyChecksum: firstPre,
    }),
  );
  try {
    for (const pgno of [...pages.keys()].sort((a, b) => a - b)) await enc.writePage(pgno, pages.get(pgno) as Buffer);
    const { size } = await enc.finish(lastPost);
    return { minTxid: first.minTxid, maxTxid: last.maxTxid, pages: pages.size, size };
  } catch (err) {
    await enc.abort();
    throw err;
  }
}
