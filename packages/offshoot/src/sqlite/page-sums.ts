import { readFile } from 'node:fs/promises';
import { fail } from '../core/errors.js';
import { CHECKSUM_FLAG } from '../ltx/checksum.js';
import { writeFileAtomic } from '../platform/atomic-file.js';

const MAGIC = Buffer.from('OSPS0001');
const HEADER = MAGIC.length + 8;

/**
 * Per-page LTX checksums of a checkout as of its last materialization or checkpoint (`<checkout>.pages`), so an
 * at-rest checkpoint can find the changed pages by reading the file once, on any filesystem.
 */
export class PageSums {
  constructor(
    readonly pageSize: number,
    /** sums[pgno - 1] is page pgno's checksum; 0n for the lock page. */
    readonly sums: BigUint64Array,
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
    return new PageSums(this.pageSize, next);
  }

  /** The rolling LTX checksum of the database these sums describe (lock page recorded as 0n, so skipped). */
  rollingChecksum(): bigint {
    let c = 0n;
    for (const s of this.sums) c ^= s;
    return CHECKSUM_FLAG | c;
  }

  /** Serializes: magic, page size (u32 BE), page count (u32 BE), then one u64 BE per page. */
  encode(): Buffer {
    const buf = Buffer.alloc(HEADER + this.sums.length * 8);
    MAGIC.copy(buf, 0);
    buf.writeUInt32BE(this.pageSize, MAGIC.length);
    buf.writeUInt32BE(this.sums.length, MAGIC.length + 4);
    for (let i = 0; i < this.sums.length; i++) buf.writeBigUInt64BE(this.sums[i] ?? 0n, HEADER + i * 8);
    return buf;
  }

  /** Parses the serialized form; CORRUPT on anything else. */
  static decode(buf: Buffer): PageSums {
    if (buf.length < HEADER || !buf.subarray(0, MAGIC.length).equals(MAGIC))
      throw fail('CORRUPT', 'page checksum sidecar is malformed');
    const pageSize = buf.readUInt32BE(MAGIC.length);
    const count = buf.readUInt32BE(MAGIC.length + 4);
    if (buf.length !== HEADER + count * 8) throw fail('CORRUPT', 'page checksum sidecar has the wrong length');
    const sums = new BigUint64Array(count);
    for (let i = 0; i < count; i++) sums[i] = buf.readBigUInt64BE(HEADER + i * 8);
    return new PageSums(pageSize, sums);
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

/** Writes a checkout's page sums atomically. */
export async function writePageSums(dbPath: string, sums: PageSums): Promise<void> {
  await writeFileAtomic(pageSumsPath(dbPath), sums.encode());
}
