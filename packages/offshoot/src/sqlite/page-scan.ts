import { fstatSync } from 'node:fs';
import { fail } from '../core/errors.js';
import { readFully } from '../platform/read-fully.js';
import { lockPgno, pageChecksum } from '../ltx/checksum.js';
import type { PageHasher } from './page-hash.js';
import { PageSums } from './page-sums.js';
import { closeRawFile, openRawFile } from './raw-file.js';

/** Something pages can be read from at byte offsets (a plain file, or a FrozenCheckout). */
export interface PageSource {
  read(buf: Buffer, offset: number, length?: number): number;
}

/** Page size and count of the database a source holds. */
export interface Geometry {
  pageSize: number;
  pageCount: number;
}

const CHUNK = 4 << 20;

/** Reads page size (header offset 16) and page count (from the byte size) of a database source. */
export function geometryOf(src: PageSource, byteSize: number, path: string): Geometry {
  if (byteSize === 0) return { pageSize: 4096, pageCount: 0 };
  const hdr = Buffer.alloc(100);
  if (src.read(hdr, 0, 100) < 100 || hdr.toString('latin1', 0, 15) !== 'SQLite format 3') {
    throw fail('CORRUPT', `${path} is not a SQLite database`, { hint: 'point offshoot at a SQLite database file' });
  }
  const raw = hdr.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0 || byteSize % pageSize !== 0) {
    throw fail('CORRUPT', `${path} has an invalid page size or a partial page`, {
      hint: 'restore the database from a good copy',
    });
  }
  return { pageSize, pageCount: byteSize / pageSize };
}

/** Yields every page in order (lock page skipped) from large reads; each yielded buffer is valid until the next. */
export function* pagesOf(src: PageSource, g: Geometry): Generator<[number, Buffer]> {
  const perChunk = Math.max(1, Math.floor(CHUNK / g.pageSize));
  const buf = Buffer.allocUnsafe(perChunk * g.pageSize);
  const lock = lockPgno(g.pageSize);
  for (let first = 1; first <= g.pageCount; first += perChunk) {
    const n = Math.min(perChunk, g.pageCount - first + 1);
    const want = n * g.pageSize;
    if (src.read(buf, (first - 1) * g.pageSize, want) < want)
      throw fail('CORRUPT', 'database file shrank while it was being read', { retryable: true });
    for (let i = 0; i < n; i++) {
      const pgno = first + i;
      if (pgno !== lock) yield [pgno, buf.subarray(i * g.pageSize, (i + 1) * g.pageSize)];
    }
  }
}

/** Yields the listed pages (ascending) one read each; each yielded buffer is valid until the next. */
export function* selectedPagesOf(src: PageSource, g: Geometry, pgnos: readonly number[]): Generator<[number, Buffer]> {
  const buf = Buffer.allocUnsafe(g.pageSize);
  for (const pgno of pgnos) {
    if (src.read(buf, (pgno - 1) * g.pageSize, g.pageSize) < g.pageSize)
      throw fail('CORRUPT', 'database file shrank while it was being read', { retryable: true });
    yield [pgno, buf];
  }
}

/** Per-page checksums of a whole database (lock page recorded as 0n), and fast page hashes given a hasher. */
export function scanPageSums(src: PageSource, g: Geometry, hasher?: PageHasher): PageSums {
  const sums = new BigUint64Array(g.pageCount);
  const hashes = hasher ? new Uint32Array(2 * g.pageCount) : undefined;
  for (const [pgno, data] of pagesOf(src, g)) {
    sums[pgno - 1] = pageChecksum(pgno, data);
    if (hasher && hashes) hasher.hash(data, hashes, pgno - 1);
  }
  return new PageSums(g.pageSize, sums, hashes);
}

/**
 * The pages whose checksum differs from `before` (every page past its end counts as changed), the new sums, and how
 * many pages needed an LTX checksum (the cost model).
 * With a hasher, a page whose fast hash matches the recorded one keeps its recorded checksum: the only work per
 * unchanged page is the hash; the CRC is computed for the pages that changed (or whose hash was unknown).
 */
export function diffPageSums(
  src: PageSource,
  g: Geometry,
  before: PageSums,
  hasher?: PageHasher,
): { changed: number[]; sums: PageSums; checksummed: number } {
  const sums = new BigUint64Array(g.pageCount);
  const hashes = hasher ? new Uint32Array(2 * g.pageCount) : undefined;
  let checksummed = 0;
  const old = before.hashes;
  const known = Math.min(before.pageCount, g.pageCount);
  const changed: number[] = [];
  for (const [pgno, data] of pagesOf(src, g)) {
    const i = pgno - 1;
    if (hasher && hashes) {
      hasher.hash(data, hashes, i);
      if (old && i < known && old[2 * i] === hashes[2 * i] && old[2 * i + 1] === hashes[2 * i + 1]) {
        sums[i] = before.sums[i] as bigint;
        continue;
      }
    }
    const ck = pageChecksum(pgno, data);
    checksummed++;
    sums[i] = ck;
    if (before.get(pgno) !== ck) changed.push(pgno);
  }
  return { changed, sums: new PageSums(g.pageSize, sums, hashes), checksummed };
}

/** A database file opened for reading pages; close() when done. */
export class FileSource implements PageSource {
  private readonly fd: number;
  /** Byte size at open. */
  readonly size: number;

  constructor(readonly path: string) {
    this.fd = openRawFile(path);
    this.size = fstatSync(this.fd).size;
  }

  /** Reads up to length bytes at offset. */
  read(buf: Buffer, offset: number, length: number = buf.length): number {
    return readFully(this.fd, buf, offset, length);
  }

  /** Closes the descriptor. */
  close(): void {
    closeRawFile(this.fd);
  }
}
