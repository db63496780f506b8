import { randomBytes } from 'node:crypto';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { asOffshootError, fail } from '../core/errors.js';
import type { ByteSource } from './byte-reader.js';
import { foldPage, lockPgno, pageChecksum } from './checksum.js';
import { assertWalEmpty, readDbGeometry } from './db-file.js';
import { LtxDecoder } from './decoder.js';
import { hasNoChecksum, isSnapshot, type LtxHeader } from './header.js';
import { PageFile } from './page-file.js';

/** Where a database stands after applying LTX files: last txid, rolling checksum and geometry. */
export interface ChainResult {
  txid: number;
  checksum: bigint;
  pageSize: number;
  commit: number;
}

/** Opens the bytes of one chain member when the chain reaches it. */
export type LtxOpener = () => Promise<ByteSource>;

const HINT = 'the chain is damaged or incomplete; re-resolve it from the store or rebuild the branch';

function corrupt(msg: string): never {
  throw fail('CORRUPT', msg, { hint: HINT });
}

/** Writes a snapshot into an empty file; the decoder has already verified its rolling checksum. */
async function applySnapshot(dec: LtxDecoder, h: LtxHeader, file: PageFile): Promise<ChainResult> {
  if (!isSnapshot(h))
    corrupt(`chain member 1 is a segment (txids ${h.minTxid}-${h.maxTxid}); a chain starts with a snapshot`);
  if (hasNoChecksum(h)) corrupt('chain member 1 carries no checksums');
  // The target file starts empty, so all-zero pages can stay holes: they read back as zeros.
  const zeros = Buffer.alloc(h.pageSize);
  for await (const p of dec.pages()) if (!p.data.equals(zeros)) await file.write(p.pgno, p.data);
  const { postApplyChecksum } = dec.trailer();
  await file.resize(h.commit);
  return { txid: h.maxTxid, checksum: postApplyChecksum, pageSize: h.pageSize, commit: h.commit };
}

/**
 * Applies one segment on top of `st`, keeping the rolling checksum incrementally: each page folds its old
 * bytes out and new bytes in, pages dropped by a shrink fold out, zero pages added by a grow fold in.
 */
async function applySegment(
  dec: LtxDecoder,
  h: LtxHeader,
  file: PageFile,
  st: ChainResult,
  member: number,
): Promise<ChainResult> {
  const where = `chain member ${member} (txids ${h.minTxid}-${h.maxTxid})`;
  if (isSnapshot(h)) corrupt(`${where} is a snapshot; only the first member may be one`);
  if (hasNoChecksum(h)) corrupt(`${where} carries no checksums`);
  if (h.pageSize !== st.pageSize) corrupt(`${where} has page size ${h.pageSize}, the chain ${st.pageSize}`);
  if (h.minTxid !== st.txid + 1) {
    corrupt(
      `${where} does not follow txid ${st.txid}: ${h.minTxid > st.txid + 1 ? 'a gap in the chain' : 'members overlap or are out of order'}`,
    );
  }
  if (h.preApplyChecksum !== st.checksum) {
    throw fail(
      'CHECKSUM_MISMATCH',
      `${where} applies to checksum ${hex(h.preApplyChecksum)} but the chain is at ${hex(st.checksum)}`,
      { hint: HINT },
    );
  }
  const lock = lockPgno(h.pageSize);
  const prev = st.commit;
  const zeros = Buffer.alloc(h.pageSize);
  let c = st.checksum;
  // Pages between the old end and a new page that the segment does not carry read back as zeros.
  let nextFresh = prev + 1;
  const foldZerosBelow = (end: number): void => {
    for (; nextFresh < end; nextFresh++) if (nextFresh !== lock) c = foldPage(c, pageChecksum(nextFresh, zeros));
  };
  for await (const p of dec.pages()) {
    if (p.pgno <= prev) {
      c = foldPage(c, pageChecksum(p.pgno, await file.read(p.pgno)));
    } else {
      foldZerosBelow(p.pgno);
      nextFresh = p.pgno + 1;
    }
    await file.write(p.pgno, p.data);
    c = foldPage(c, pageChecksum(p.pgno, p.data));
  }
  const { postApplyChecksum } = dec.trailer();
  if (h.commit < prev) {
    await file.scan(h.commit + 1, prev, (pgno, data) => {
      if (pgno !== lock) c = foldPage(c, pageChecksum(pgno, data));
    });
  } else {
    foldZerosBelow(h.commit + 1);
  }
  await file.resize(h.commit);
  if (c !== postApplyChecksum) {
    throw fail(
      'CHECKSUM_MISMATCH',
      `${where} yields checksum ${hex(c)} but its trailer says ${hex(postApplyChecksum)}`,
      { hint: HINT },
    );
  }
  return { txid: h.maxTxid, checksum: c, pageSize: h.pageSize, commit: h.commit };
}

function hex(v: bigint): string {
  return v.toString(16).padStart(16, '0');
}

/** Runs `use` on a decoder over the opened source, always releasing the source. */
async function withDecoder<T>(openSource: LtxOpener, use: (dec: LtxDecoder, h: LtxHeader) => Promise<T>): Promise<T> {
  const dec = new LtxDecoder(await openSource());
  try {
    return await use(dec, await dec.header());
  } finally {
    await dec.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic, only its durability is weaker.
  }
}

/**
 * Materializes a chain (a snapshot, then contiguous segments) into `destPath`: built in a temp file next to
 * it, fsynced and renamed into place only when every member verified; -wal/-shm of the destination are
 * removed. On any failure no destination file is created (an existing one is left untouched).
 */
export async function applyChain(sources: readonly LtxOpener[], destPath: string): Promise<ChainResult> {
  if (sources.length === 0)
    throw fail('INVALID_ARGUMENT', 'an LTX chain needs at least one member', { hint: 'pass the snapshot first' });
  const tmp = join(dirname(destPath), `.${basename(destPath)}.${randomBytes(6).toString('hex')}.tmp`);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx+');
    const out = fh;
    let file: PageFile | undefined;
    let st: ChainResult | undefined;
    for (const [i, openSource] of sources.entries()) {
      st = await withDecoder(openSource, async (dec, h) => {
        if (st === undefined || file === undefined) {
          file = new PageFile(out, h.pageSize);
          return applySnapshot(dec, h, file);
        }
        return applySegment(dec, h, file, st, i + 1);
      });
    }
    await file?.flush();
    await out.sync();
    await out.close();
    fh = undefined;
    await rm(`${destPath}-wal`, { force: true });
    await rm(`${destPath}-shm`, { force: true });
    await rename(tmp, destPath);
    await syncDir(dirname(destPath));
    return st as ChainResult;
  } catch (err) {
    await fh?.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw asOffshootError(err);
  }
}

/**
 * Extends an existing database file in place with segments, starting from its known rolling checksum
 * (and txid, when given, to check the first segment follows it). Meant for a private copy: after a failure
 * the file is left part-way and must be discarded.
 */
export async function applySegments(
  dbPath: string,
  startChecksum: bigint,
  sources: readonly LtxOpener[],
  opts: { txid?: number } = {},
): Promise<ChainResult> {
  await assertWalEmpty(dbPath);
  let fh: FileHandle;
  try {
    fh = await open(dbPath, 'r+');
  } catch (err) {
    throw asOffshootError(err);
  }
  try {
    const geo = await readDbGeometry(fh, dbPath);
    let st: ChainResult = {
      txid: opts.txid ?? 0,
      checksum: startChecksum,
      pageSize: geo.pageSize,
      commit: geo.pageCount,
    };
    let file: PageFile | undefined;
    for (const [i, openSource] of sources.entries()) {
      st = await withDecoder(openSource, async (dec, h) => {
        const base = i === 0 && opts.txid === undefined ? { ...st, txid: h.minTxid - 1 } : st;
        // A zero-length database has no header yet, so it takes its page size from the first segment.
        if (base.commit === 0 && i === 0) base.pageSize = h.pageSize;
        file ??= new PageFile(fh, base.pageSize);
        return applySegment(dec, h, file, base, i + 1);
      });
    }
    await file?.flush();
    await fh.sync();
    return st;
  } catch (err) {
    throw asOffshootError(err);
  } finally {
    await fh.close();
  }
}
