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

/**
 * A chain result plus every page's LTX checksum (index pgno - 1, 0n for the lock page), kept while applying so
 * that neither folding out a replaced page nor the caller's page-sum sidecar needs another read of the file.
 */
interface Applied extends ChainResult {
  sums: BigUint64Array;
}

/**
 * What apply reports besides its result: `onSums` receives the final page checksums, `onPage` every page it
 * writes (zero pages included, in order; a later call for a page supersedes an earlier one). The bytes passed to
 * `onPage` are valid only during the call.
 */
export interface ApplyOptions {
  onSums?: (sums: BigUint64Array) => void;
  onPage?: (pgno: number, data: Buffer) => void;
  /** False: the file need not reach the disk (a state no crash leaves to be read), so it is never fsynced. */
  sync?: boolean;
}

function finish(a: Applied, opts: ApplyOptions): ChainResult {
  opts.onSums?.(a.sums);
  return { txid: a.txid, checksum: a.checksum, pageSize: a.pageSize, commit: a.commit };
}

/** Opens the bytes of one chain member when the chain reaches it. */
export type LtxOpener = () => Promise<ByteSource>;

const HINT = 'the chain is damaged or incomplete; re-resolve it from the store or rebuild the branch';

function corrupt(msg: string): never {
  throw fail('CORRUPT', msg, { hint: HINT });
}

/** Writes a snapshot into an empty file; the decoder has already verified its rolling checksum. */
async function applySnapshot(dec: LtxDecoder, h: LtxHeader, file: PageFile, opts: ApplyOptions): Promise<Applied> {
  if (!isSnapshot(h))
    corrupt(`chain member 1 is a segment (txids ${h.minTxid}-${h.maxTxid}); a chain starts with a snapshot`);
  if (hasNoChecksum(h)) corrupt('chain member 1 carries no checksums');
  const sums = new BigUint64Array(h.commit);
  // The target file starts empty, so all-zero pages can stay holes: they read back as zeros.
  const zeros = Buffer.alloc(h.pageSize);
  for await (const p of dec.pages()) {
    sums[p.pgno - 1] = p.checksum;
    opts.onPage?.(p.pgno, p.data);
    if (!p.data.equals(zeros)) await file.write(p.pgno, p.data);
  }
  const { postApplyChecksum } = dec.trailer();
  await file.resize(h.commit);
  return { txid: h.maxTxid, checksum: postApplyChecksum, pageSize: h.pageSize, commit: h.commit, sums };
}

function resized(sums: BigUint64Array, pages: number): BigUint64Array {
  if (sums.length === pages) return sums;
  const next = new BigUint64Array(pages);
  next.set(sums.subarray(0, Math.min(pages, sums.length)));
  return next;
}

/**
 * Applies one segment on top of `st`, keeping the rolling checksum incrementally: each page folds its old
 * checksum (known from `st.sums`, never re-read) out and its new one in, pages dropped by a shrink fold out, zero
 * pages added by a grow fold in.
 */
async function applySegment(
  dec: LtxDecoder,
  h: LtxHeader,
  file: PageFile,
  st: Applied,
  member: number,
  opts: ApplyOptions,
): Promise<Applied> {
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
  const sums = resized(st.sums, Math.max(prev, h.commit));
  const zeros = Buffer.alloc(h.pageSize);
  let c = st.checksum;
  // Pages between the old end and a new page that the segment does not carry read back as zeros.
  let nextFresh = prev + 1;
  const foldZerosBelow = (end: number): void => {
    for (; nextFresh < end; nextFresh++) {
      if (nextFresh === lock) continue;
      const ck = pageChecksum(nextFresh, zeros);
      sums[nextFresh - 1] = ck;
      opts.onPage?.(nextFresh, zeros);
      c = foldPage(c, ck);
    }
  };
  for await (const p of dec.pages()) {
    if (p.pgno <= prev) {
      c = foldPage(c, sums[p.pgno - 1] as bigint);
    } else {
      foldZerosBelow(p.pgno);
      nextFresh = p.pgno + 1;
    }
    await file.write(p.pgno, p.data);
    sums[p.pgno - 1] = p.checksum;
    opts.onPage?.(p.pgno, p.data);
    c = foldPage(c, p.checksum);
  }
  const { postApplyChecksum } = dec.trailer();
  if (h.commit < prev) {
    for (let pgno = h.commit + 1; pgno <= prev; pgno++) if (pgno !== lock) c = foldPage(c, sums[pgno - 1] as bigint);
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
  return { txid: h.maxTxid, checksum: c, pageSize: h.pageSize, commit: h.commit, sums: resized(sums, h.commit) };
}

function hex(v: bigint): string {
  return v.toString(16).padStart(16, '0');
}

/** Runs `use` on a decoder over the opened source, always releasing the source. */
async function withDecoder<T>(openSource: LtxOpener, use: (dec: LtxDecoder, h: LtxHeader) => Promise<T>): Promise<T> {
  const dec = new LtxDecoder(await openSource(), { transientPages: true });
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
export async function applyChain(
  sources: readonly LtxOpener[],
  destPath: string,
  opts: ApplyOptions = {},
): Promise<ChainResult> {
  if (sources.length === 0)
    throw fail('INVALID_ARGUMENT', 'an LTX chain needs at least one member', { hint: 'pass the snapshot first' });
  const tmp = join(dirname(destPath), `.${basename(destPath)}.${randomBytes(6).toString('hex')}.tmp`);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx+');
    const out = fh;
    let file: PageFile | undefined;
    let st: Applied | undefined;
    for (const [i, openSource] of sources.entries()) {
      st = await withDecoder(openSource, async (dec, h) => {
        if (st === undefined || file === undefined) {
          file = new PageFile(out, h.pageSize);
          return applySnapshot(dec, h, file, opts);
        }
        return applySegment(dec, h, file, st, i + 1, opts);
      });
    }
    await file?.flush();
    if (opts.sync !== false) await out.sync();
    await out.close();
    fh = undefined;
    await rm(`${destPath}-wal`, { force: true });
    await rm(`${destPath}-shm`, { force: true });
    await rename(tmp, destPath);
    if (opts.sync !== false) await syncDir(dirname(destPath));
    return finish(st as Applied, opts);
  } catch (err) {
    await fh?.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw asOffshootError(err);
  }
}

async function scanSums(file: PageFile, pageCount: number): Promise<BigUint64Array> {
  const sums = new BigUint64Array(pageCount);
  const lock = lockPgno(file.pageSize);
  await file.scan(1, pageCount, (pgno, data) => {
    if (pgno !== lock) sums[pgno - 1] = pageChecksum(pgno, data);
  });
  return sums;
}

/**
 * Extends an existing database file in place with segments, starting from its known rolling checksum
 * (and txid, when given, to check the first segment follows it) and, when known, its page checksums (otherwise
 * the file is read once to compute them). Meant for a private copy: after a failure the file is left part-way
 * and must be discarded.
 */
export async function applySegments(
  dbPath: string,
  startChecksum: bigint,
  sources: readonly LtxOpener[],
  opts: ApplyOptions & { txid?: number; sums?: BigUint64Array } = {},
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
    const known = opts.sums !== undefined && opts.sums.length === geo.pageCount ? opts.sums : undefined;
    let st: Applied = {
      txid: opts.txid ?? 0,
      checksum: startChecksum,
      pageSize: geo.pageSize,
      commit: geo.pageCount,
      sums: known ?? (await scanSums(new PageFile(fh, geo.pageSize), geo.pageCount)),
    };
    let file: PageFile | undefined;
    for (const [i, openSource] of sources.entries()) {
      st = await withDecoder(openSource, async (dec, h) => {
        const base = i === 0 && opts.txid === undefined ? { ...st, txid: h.minTxid - 1 } : st;
        // A zero-length database has no header yet, so it takes its page size from the first segment.
        if (base.commit === 0 && i === 0) base.pageSize = h.pageSize;
        file ??= new PageFile(fh, base.pageSize);
        return applySegment(dec, h, file, base, i + 1, opts);
      });
    }
    await file?.flush();
    if (opts.sync !== false) await fh.sync();
    return finish(st, opts);
  } catch (err) {
    throw asOffshootError(err);
  } finally {
    await fh.close();
  }
}
