import { readFile } from 'node:fs/promises';
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
  constructor(
    readonly pageSize: number,
    /** sums[pgno - 1] is page pgno's checksum; 0n for the lock page. */
    readonly sums: BigUint64Array,
    /** hashes[2(pgno - 1)], hashes[2(pgno - 1) + 1]: page pgno's fast hash, or 0, 0 when unknown. */
    readonly hashes?: Uint32Array,
  ) {}

  /** Number of pages recorded. */
  get pageCount(): number {
    return this.sums.length;
  }

  /** The recorded checksum of a page, or undefined past the recorded end. */
  get(pgno: number): bigint | undefined {
    return pgno >= 1 && pgno <= this.sums.length ? this.sums[pgno - 1] : undefined;
  }

  /** A copy resized to pageCount pages (new pages read as 0n, i.e. unknown). */
  resized(pageCount: number): PageSums {
    const next = new BigUint64Array(pageCount);
    next.set(this.sums.subarray(0, Math.min(pageCount, this.sums.length)));
    let hashes: Uint32Array | undefined;
    if (this.hashes) {
      hashes = new Uint32Array(2 * pageCount);
      hashes.set(this.hashes.subarray(0, Math.min(2 * pageCount, this.hashes.length)));
    }
    return new PageSums(this.pageSize, next, hashes);
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

/** Path of the page-checksum sidecar for a checkout. */
export function pageSumsPath(dbPath: string): string {
  return `${dbPath}.pages`;
}

/** Reads a checkout's page sums, or undefined when absent or unreadable. */
export async function readPageSums(dbPath: string): Promise<PageSums | undefined> {
  try {
    return PageSums.decode(await readFile(pageSumsPath(dbPath)));
  } catch {
    return undefined;
  }
}

/**
 * Writes a checkout's page sums atomically but without fsync, like its `.sum` sidecar: sums a crash left stale or
 * torn disagree with the checksum the `.sum` records, and every reader checks that before using them.
 */
export async function writePageSums(dbPath: string, sums: PageSums): Promise<void> {
  await replaceFile(pageSumsPath(dbPath), sums.encode());
}
