import {
  type BigIntStats,
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { endianness } from 'node:os';
import { fail } from '../core/errors.js';
import { CHECKSUM_FLAG } from '../ltx/checksum.js';
import { replaceFile } from '../platform/atomic-file.js';

const MAGIC_V1 = Buffer.from('OSPS0001');
const MAGIC_V2 = Buffer.from('OSPS0002');
const HEADER = MAGIC_V1.length + 8;
/** Typed arrays are native-endian; the file is big-endian, so a little-endian host swaps whole columns. */
const SWAP = endianness() === 'LE';

/**
 * Per-page LTX checksums of a checkout as of its last materialization or checkpoint (`<checkout>.pages`), so an
 * at-rest checkpoint can find the changed pages by reading the file once, on any filesystem. Optionally also a fast
 * hash of every page (xxHash64 halves, see page-hash.ts; 0,0 = unknown): a page whose fast hash still matches keeps
 * its recorded LTX checksum without one being computed. A hash is recorded only together with the checksum of the
 * same bytes; code that changes a checksum without hashing the page drops the hashes (withoutHashes).
 */
export class PageSums {
  /** The `.pages` file these sums were last read from or written to, as it was then (undefined: none known). */
  file: SumsFileStamp | undefined;

  constructor(
    readonly pageSize: number,
    /** sums[pgno - 1] is page pgno's checksum; 0n for the lock page. */
    readonly sums: BigUint64Array,
    /** hashes[2(pgno - 1)], hashes[2(pgno - 1) + 1]: page pgno's fast hash, or 0, 0 when unknown. */
    readonly hashes?: Uint32Array,
    /** What the owner knows of the `.pages` file at its path: these sums but for the pages changed since. */
    readonly since?: SumsBaseline,
  ) {}

  /** Number of pages recorded. */
  get pageCount(): number {
    return this.sums.length;
  }

  /** The recorded checksum of a page, or undefined past the recorded end. */
  get(pgno: number): bigint | undefined {
    return pgno >= 1 && pgno <= this.sums.length ? this.sums[pgno - 1] : undefined;
  }

  /**
   * A copy resized to pageCount pages (new pages read as 0n, i.e. unknown), its buffer with room for `room` pages
   * more, which grownInPlace then takes without copying.
   */
  resized(pageCount: number, room = 0): PageSums {
    const next = new BigUint64Array(new ArrayBuffer(8 * (pageCount + room)), 0, pageCount);
    next.set(this.sums.subarray(0, Math.min(pageCount, this.sums.length)));
    let hashes: Uint32Array | undefined;
    if (this.hashes) {
      hashes = new Uint32Array(2 * pageCount);
      hashes.set(this.hashes.subarray(0, Math.min(2 * pageCount, this.hashes.length)));
    }
    return new PageSums(this.pageSize, next, hashes);
  }

  /**
   * These sums grown to pageCount pages over the same buffer (the new pages read as 0n), or undefined when the buffer
   * has no room for them or there are fast hashes. Only for the buffer's one writer (a copy made by resized).
   */
  grownInPlace(pageCount: number): PageSums | undefined {
    const s = this.sums;
    if (this.hashes !== undefined || pageCount < s.length || s.byteOffset + 8 * pageCount > s.buffer.byteLength)
      return undefined;
    const next = new BigUint64Array(s.buffer, s.byteOffset, pageCount);
    next.fill(0n, s.length);
    return new PageSums(this.pageSize, next);
  }

  /**
   * The same sums over the same arrays, with a `file` of its own, for a reader: nobody may write the arrays of sums
   * handed out this way (an owner that will change them takes a copy with resized first).
   */
  view(): PageSums {
    const v = new PageSums(this.pageSize, this.sums, this.hashes);
    v.file = this.file;
    return v;
  }

  /** The same checksums with no fast hashes, for an owner that will change checksums without hashing pages. */
  withoutHashes(): PageSums {
    return this.hashes ? new PageSums(this.pageSize, this.sums) : this;
  }

  /** The rolling LTX checksum of the database these sums describe (lock page recorded as 0n, so skipped). */
  rollingChecksum(): bigint {
    // XOR by 32-bit halves: a BigInt per page cost ~50 ns, 17 ms for a 1.3 GiB checkout, paid at every session open.
    const words = new Uint32Array(this.sums.buffer, this.sums.byteOffset, 2 * this.sums.length);
    let even = 0;
    let odd = 0;
    for (let i = 0; i < words.length; i += 2) {
      even ^= words[i] as number;
      odd ^= words[i + 1] as number;
    }
    const [lo, hi] = SWAP ? [even, odd] : [odd, even];
    return CHECKSUM_FLAG | (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
  }

  /**
   * Serializes: magic, page size (u32 BE), page count (u32 BE), one u64 BE per page; version 2 (with hashes) then
   * one pair of u32 BE per page.
   */
  encode(): Buffer {
    const n = this.sums.length;
    const buf = Buffer.alloc(HEADER + n * 8 + (this.hashes ? n * 8 : 0));
    (this.hashes ? MAGIC_V2 : MAGIC_V1).copy(buf, 0);
    buf.writeUInt32BE(this.pageSize, MAGIC_V1.length);
    buf.writeUInt32BE(n, MAGIC_V1.length + 4);
    // Whole columns at once: copy the native-endian arrays in and make them big-endian in place.
    Buffer.from(this.sums.buffer, this.sums.byteOffset, n * 8).copy(buf, HEADER);
    if (SWAP) buf.subarray(HEADER, HEADER + n * 8).swap64();
    if (this.hashes) {
      const base = HEADER + n * 8;
      Buffer.from(this.hashes.buffer, this.hashes.byteOffset, n * 8).copy(buf, base);
      if (SWAP) buf.subarray(base, base + n * 8).swap32();
    }
    return buf;
  }

  /** Parses either version; CORRUPT on anything else. */
  static decode(buf: Buffer): PageSums {
    const magic = buf.subarray(0, MAGIC_V1.length);
    const v2 = magic.equals(MAGIC_V2);
    if (buf.length < HEADER || (!v2 && !magic.equals(MAGIC_V1)))
      throw fail('CORRUPT', 'page checksum sidecar is malformed');
    const pageSize = buf.readUInt32BE(MAGIC_V1.length);
    const count = buf.readUInt32BE(MAGIC_V1.length + 4);
    if (buf.length !== HEADER + count * (v2 ? 16 : 8))
      throw fail('CORRUPT', 'page checksum sidecar has the wrong length');
    const sums = new BigUint64Array(count);
    const sumBytes = Buffer.from(sums.buffer);
    buf.copy(sumBytes, 0, HEADER, HEADER + count * 8);
    if (SWAP) sumBytes.swap64();
    if (!v2) return new PageSums(pageSize, sums);
    const hashes = new Uint32Array(2 * count);
    const hashBytes = Buffer.from(hashes.buffer);
    buf.copy(hashBytes, 0, HEADER + count * 8, HEADER + count * 16);
    if (SWAP) hashBytes.swap32();
    return new PageSums(pageSize, sums, hashes);
  }
}

/** A `.pages` file's identity as stat gives it: its content is unchanged while all three are. */
export interface SumsFileStamp {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

/**
 * An owner's record of how its page sums stand against the `.pages` file it seeded them from (`file`): equal but for
 * the pages in `changed` and every page past `low`, the fewest pages the sums have had since. A writer that changes
 * the sums marks what it changed; writePageSums then rewrites only those entries (and moves the record on).
 */
export class SumsBaseline {
  readonly changed = new Set<number>();
  low: number;

  constructor(
    public file: SumsFileStamp,
    public pageCount: number,
  ) {
    this.low = pageCount;
  }

  /** Records that the sums now have pageCount pages. */
  resizedTo(pageCount: number): void {
    this.low = Math.min(this.low, pageCount);
  }

  /** The file now holds the sums exactly, as version 1 (as `file`, with pageCount pages). */
  settle(file: SumsFileStamp, pageCount: number): void {
    this.file = file;
    this.pageCount = pageCount;
    this.low = pageCount;
    this.changed.clear();
  }
}

/** What a `.sum` sidecar records of the page sums beside it (checkout-sidecar.ts's `ltx_checksum`, `pages_version`). */
export interface SumsVouch {
  ltx_checksum?: string;
  pages_version?: number;
}

/**
 * The page sums a reader may use, given the `.sum` beside them: none unless their rolling checksum is the one the
 * `.sum` records; and their fast hashes only when the `.sum` names no version or version 2. A `.sum` that vouches for
 * version 1 was written after a patch that turns a version-2 file into version 1 in place, unsynced: a crash can
 * leave that file still reading as version 2, its sums new and its hashes old, which only this rule keeps from being
 * trusted. O(pages) (the checksum), as before; the version is one comparison.
 */
export function trustedPageSums(sums: PageSums | undefined, sc: SumsVouch | undefined): PageSums | undefined {
  if (sums === undefined || sc?.ltx_checksum === undefined) return undefined;
  if (sums.rollingChecksum() !== BigInt('0x' + sc.ltx_checksum)) return undefined;
  if (sums.hashes === undefined || sc.pages_version === undefined || sc.pages_version === 2) return sums;
  const plain = new PageSums(sums.pageSize, sums.sums);
  plain.file = sums.file;
  return plain;
}

/** Path of the page-checksum sidecar for a checkout. */
export function pageSumsPath(dbPath: string): string {
  return `${dbPath}.pages`;
}

/** Reads a checkout's page sums, or undefined when absent or unreadable; they remember the file they were read from. */
export async function readPageSums(dbPath: string): Promise<PageSums | undefined> {
  try {
    const fh = await open(pageSumsPath(dbPath), 'r');
    try {
      const st = await fh.stat({ bigint: true });
      const sums = PageSums.decode(await fh.readFile());
      sums.file = stampOf(st);
      return sums;
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Writes a checkout's page sums atomically but without fsync, like its `.sum` sidecar: sums a crash left stale or
 * torn disagree with the checksum the `.sum` records, and every reader checks that before using them. Sums that carry
 * their owner's baseline (`since`) and a file still as it was then are patched instead: only the changed pages'
 * entries are written (patchPageSums), O(changed pages) where a whole rewrite is O(pages). Returns the version
 * written, which the `.sum` written after it must record as `pages_version` (trustedPageSums).
 */
export async function writePageSums(dbPath: string, sums: PageSums): Promise<1 | 2> {
  const path = pageSumsPath(dbPath);
  if (sums.since !== undefined && sums.hashes === undefined) {
    const patched = patchPageSums(path, sums, sums.since);
    if (patched !== undefined) {
      sums.file = patched;
      sums.since.settle(patched, sums.pageCount);
      return 1;
    }
  }
  await replaceFile(path, sums.encode());
  // A stat racing another writer records its file: the next patch then disagrees with the `.sum`, as stale sums do.
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  sums.file = st && stampOf(st);
  if (sums.file !== undefined) sums.since?.settle(sums.file, sums.pageCount);
  return sums.hashes === undefined ? 1 : 2;
}

/** True when the stat is of the file the stamp recorded (inode, size and mtime all equal). */
export function sameStamp(st: BigIntStats, f: SumsFileStamp): boolean {
  return st.ino === f.ino && st.size === f.size && st.mtimeNs === f.mtimeNs;
}

function stampOf(st: BigIntStats): SumsFileStamp {
  return { ino: st.ino, size: st.size, mtimeNs: st.mtimeNs };
}

/**
 * Brings the `.pages` file at path from base's file to sums (version 1, no fast hashes: the owner changed sums without
 * hashing pages) by writing, in place, only the entries of base's changed pages and of the pages past its low mark,
 * then cutting the file to version 1's length and writing the header. Only a file that is still base's and ours
 * alone (one link) is patched. A version-1 file stays version 1 whatever a crash keeps of the patch, so a torn patch
 * only disagrees with the checksum the `.sum` records, as stale sums do. A version-2 file (a fresh checkout's) is
 * patched too, into version 1: its sums column is version 1's entries, its hash column is cut off. A crash can keep
 * it reading as version 2 with new sums beside old hashes, which a reader would trust; the `.sum` written after
 * records `pages_version: 1`, and trustedPageSums never takes hashes from a file such a `.sum` vouches for (and with
 * no `.sum` nothing is trusted). Returns the patched file's stamp, or undefined (the caller then rewrites the file
 * whole) when the file is not base's (another writer replaced it) or the patch would write as much as a rewrite.
 */
function patchPageSums(path: string, sums: PageSums, base: SumsBaseline): SumsFileStamp | undefined {
  const n = sums.pageCount;
  const low = Math.min(base.low, n);
  const pages = [...base.changed].filter((p) => p <= low);
  if (pages.length + (n - low) > n / 2) return undefined;
  pages.sort((a, b) => a - b);
  for (let p = low + 1; p <= n; p++) pages.push(p);
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch {
    return undefined;
  }
  try {
    return isBase(fd, sums.pageSize, base) ? patchAt(fd, sums, pages) : undefined;
  } finally {
    closeSync(fd);
  }
}

// Whether the open file is still base's (same stamp, one link), of either version, with base's page size and count.
function isBase(fd: number, pageSize: number, base: SumsBaseline): boolean {
  const st = fstatSync(fd, { bigint: true });
  const f = base.file;
  if (st.nlink !== 1n || !sameStamp(st, f)) return false;
  const head = Buffer.alloc(HEADER);
  if (readSync(fd, head, 0, HEADER, 0) !== HEADER) return false;
  const magic = head.subarray(0, MAGIC_V1.length);
  return (
    (magic.equals(MAGIC_V1) || magic.equals(MAGIC_V2)) &&
    head.readUInt32BE(MAGIC_V1.length) === pageSize &&
    head.readUInt32BE(MAGIC_V1.length + 4) === base.pageCount
  );
}

// Writes pages' entries (ascending) in runs, sets the length to version 1's for sums, then the header; returns the
// file's stamp after.
function patchAt(fd: number, sums: PageSums, pages: readonly number[]): SumsFileStamp {
  for (let i = 0; i < pages.length; ) {
    let j = i + 1;
    while (j < pages.length && (pages[j] as number) === (pages[j - 1] as number) + 1) j++;
    const first = pages[i] as number;
    const run = Buffer.allocUnsafe((j - i) * 8);
    for (let k = 0; k < j - i; k++) run.writeBigUInt64BE(sums.sums[first - 1 + k] as bigint, k * 8);
    writeSync(fd, run, 0, run.length, HEADER + (first - 1) * 8);
    i = j;
  }
  // Only when the length changes: XFS treats any truncate as one that may expose stale data, and writes back.
  const length = HEADER + sums.pageCount * 8;
  if (fstatSync(fd).size !== length) ftruncateSync(fd, length);
  const head = Buffer.alloc(HEADER);
  MAGIC_V1.copy(head, 0);
  head.writeUInt32BE(sums.pageSize, MAGIC_V1.length);
  head.writeUInt32BE(sums.pageCount, MAGIC_V1.length + 4);
  writeSync(fd, head, 0, HEADER, 0);
  return stampOf(fstatSync(fd, { bigint: true }));
}
