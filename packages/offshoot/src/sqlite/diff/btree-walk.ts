import fs from 'node:fs';
import { DB_HEADER_SIZE, parseDbHeader } from '../db-header.js';
import { closeRawFile, openRawFile } from '../raw-file.js';

/** SQLite b-trees are balanced and a 4-billion-page file is well under this depth; deeper means a damaged file. */
const MAX_DEPTH = 20;

const TABLE_INTERIOR = 0x05;
const INDEX_INTERIOR = 0x02;
const TABLE_LEAF = 0x0d;
const INDEX_LEAF = 0x0a;

/** A database file open for raw page reads, its geometry checked. */
export interface RawDbFile {
  fd: number;
  pageSize: number;
  /** Bytes of each page that b-tree content may use (page size less the reserved tail). */
  usableSize: number;
  pageCount: number;
  /** The descriptor was the caller's (see openRawDb): closeRawDb leaves it open. */
  given?: boolean;
}

/** The b-tree owning each page reached, and how many pages were read to learn it. */
export interface BtreeMap<T> {
  /** Undefined when a page did not look like a b-tree page (damage, or a layout this walk does not follow). */
  owners: Map<number, T> | undefined;
  pagesRead: number;
}

/**
 * Opens `file` read-only for raw page reads. Undefined when it is missing, not an SQLite file, or not a whole
 * number of pages: the caller then maps pages through SQLite, which reports any damage properly. Close it with
 * closeRawDb (its descriptor's close waits for the process's last connection on the file: see raw-file). With
 * `given`, reads through that descriptor, which the caller keeps and closes.
 */
export function openRawDb(file: string, given?: number): RawDbFile | undefined {
  let fd: number;
  try {
    fd = given ?? openRawFile(file);
  } catch {
    return undefined;
  }
  try {
    const head = Buffer.alloc(DB_HEADER_SIZE);
    if (fs.readSync(fd, head, 0, DB_HEADER_SIZE, 0) === DB_HEADER_SIZE) {
      const { pageSize, reservedBytes } = parseDbHeader(head);
      const { size } = fs.fstatSync(fd);
      if (size % pageSize === 0)
        return {
          fd,
          pageSize,
          usableSize: pageSize - reservedBytes,
          pageCount: size / pageSize,
          ...(given === undefined ? {} : { given: true }),
        };
    }
  } catch {
    // Not an SQLite file: SQLite's own open says so with a proper error.
  }
  if (given === undefined) closeRawFile(fd);
  return undefined;
}

/** Closes a file opened by openRawDb (no-op for undefined, or for a descriptor the caller gave and still owns). */
export function closeRawDb(file: RawDbFile | undefined): void {
  if (file !== undefined && file.given !== true) closeRawFile(file.fd);
}

/** Which b-tree owns each page reached: a lookup by page number (a typed array inside, not a map of every page). */
export interface PageOwners<T> {
  get(pgno: number): T | undefined;
  has(pgno: number): boolean;
}

/** The owner lookup of a walk, and how many pages were read to learn it. */
export interface BtreeOwners<T> {
  /** Undefined when a page did not look like a b-tree page (damage, or a layout this walk does not follow). */
  owners: PageOwners<T> | undefined;
  pagesRead: number;
}

/**
 * Records the owner of every page of the b-trees rooted at `roots` (root page → owner), reading interior pages only.
 * Every leaf of an SQLite b-tree sits at the same depth, so once the first page of a level is a leaf the rest of
 * that level is recorded unread. Overflow, freelist and pointer-map pages are never reached. Each page is claimed
 * once and the depth is bounded, so a damaged file ends the walk (owners undefined) instead of looping.
 */
export function walkBtreeOwners<T>(file: RawDbFile, roots: ReadonlyMap<number, T>): BtreeOwners<T> {
  const slot = new Int32Array(file.pageCount + 1);
  const values: T[] = [];
  const page = Buffer.allocUnsafe(file.pageSize);
  let pagesRead = 0;

  /** Child page numbers of an interior page, [] for a leaf, undefined for anything else. */
  const children = (pgno: number): number[] | undefined => {
    if (fs.readSync(file.fd, page, 0, file.pageSize, (pgno - 1) * file.pageSize) !== file.pageSize) return undefined;
    pagesRead++;
    const hdr = pgno === 1 ? DB_HEADER_SIZE : 0;
    const type = page[hdr];
    if (type === TABLE_LEAF || type === INDEX_LEAF) return [];
    if (type !== TABLE_INTERIOR && type !== INDEX_INTERIOR) return undefined;
    const cells = page.readUInt16BE(hdr + 3);
    const pointers = hdr + 12;
    if (pointers + 2 * cells > file.usableSize) return undefined;
    const out: number[] = [];
    for (let i = 0; i < cells; i++) {
      const at = page.readUInt16BE(pointers + 2 * i);
      if (at < pointers + 2 * cells || at + 4 > file.usableSize) return undefined;
      out.push(page.readUInt32BE(at));
    }
    out.push(page.readUInt32BE(hdr + 8));
    return out;
  };

  const claim = (pgno: number, owner: number): boolean => {
    if (pgno < 1 || pgno > file.pageCount || slot[pgno] !== 0) return false;
    slot[pgno] = owner;
    return true;
  };

  for (const [root, value] of roots) {
    values.push(value);
    const owner = values.length;
    if (!claim(root, owner)) return { owners: undefined, pagesRead };
    let level = [root];
    for (let depth = 0; level.length > 0; depth++) {
      if (depth > MAX_DEPTH) return { owners: undefined, pagesRead };
      const next: number[] = [];
      for (const [i, pgno] of level.entries()) {
        const kids = children(pgno);
        if (kids === undefined) return { owners: undefined, pagesRead };
        if (kids.length === 0 && i === 0) break;
        for (const kid of kids) {
          if (!claim(kid, owner)) return { owners: undefined, pagesRead };
          next.push(kid);
        }
      }
      level = next;
    }
  }
  const owners: PageOwners<T> = {
    get: (pgno) =>
      pgno >= 1 && pgno < slot.length && slot[pgno] !== 0 ? values[(slot[pgno] as number) - 1] : undefined,
    has: (pgno) => pgno >= 1 && pgno < slot.length && slot[pgno] !== 0,
  };
  return { owners, pagesRead };
}

/** walkBtreeOwners as a map of every page reached to its owner (for inspection; the diff uses the lookup). */
export function mapBtreePages<T>(file: RawDbFile, roots: ReadonlyMap<number, T>): BtreeMap<T> {
  const { owners, pagesRead } = walkBtreeOwners(file, roots);
  if (owners === undefined) return { owners: undefined, pagesRead };
  const map = new Map<number, T>();
  for (let p = 1; p <= file.pageCount; p++) {
    const o = owners.get(p);
    if (o !== undefined) map.set(p, o);
  }
  return { owners: map, pagesRead };
}
