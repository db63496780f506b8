import fs from 'node:fs';
import { DB_HEADER_SIZE } from '../db-header.js';
import { type PageOwners, type RawDbFile, walkBtreeOwners } from './btree-walk.js';
import { varint } from './leaf-rows.js';

const TABLE_INTERIOR = 0x05;
const TABLE_LEAF = 0x0d;
const INDEX_INTERIOR = 0x02;
const INDEX_LEAF = 0x0a;
const MAX_DEPTH = 20;

/** A table b-tree page as a descent needs it: leaf or interior, and an interior page's divider keys and children. */
export interface TablePage {
  leaf: boolean;
  /** Divider keys of the interior cells, ascending; keys[i] bounds kids[i] from above. */
  keys: bigint[];
  /** Left children of the cells, then the right-most child. */
  kids: number[];
}

/** What a TableSeeker learns of a file that does not change, held by no file descriptor: table pages parsed, table roots. */
export interface SeekerMemo {
  parsed: Map<number, TablePage | undefined>;
  tables?: number[];
}

/** What placing pages of one file has learned, free of its file descriptor, so a later open of the file reuses it. */
export interface Learned<T> extends SeekerMemo {
  placed: Map<number, T | undefined>;
  indexes?: PageOwners<T>;
  all?: { owners: PageOwners<T> | undefined };
}

/**
 * Finds the table b-tree owning a page by the page's own first key: a table page (leaf or interior) holds some rowid
 * of its subtree, and SQLite's descent for that rowid from the root of the tree that owns the page passes through
 * it. So placing a changed page costs about depth × tables page reads (the upper levels are shared), not a walk
 * of every interior page. Only table pages of rowid trees are placed this way; `undefined` means "not placed"
 * (an index page, a page no descent reached, a malformed page) and the caller falls back to the full walk.
 */
export class TableSeeker {
  private readonly page: Buffer;

  constructor(
    private readonly file: RawDbFile,
    private readonly roots: readonly number[],
    private readonly onRead: () => void,
    private readonly learned: SeekerMemo = { parsed: new Map() },
  ) {
    // Zeros past the page end stop a varint of a malformed cell near the end instead of reading off the buffer.
    this.page = Buffer.alloc(file.pageSize + 18);
  }

  /**
   * What `pgno` is: a table page and the root of the tree a descent of its first key finds it in (`root`
   * undefined when none does: a free page keeps its old bytes), an index page, or no b-tree page at all.
   */
  place(pgno: number): { kind: 'table'; root: number | undefined } | { kind: 'index' | 'other' } {
    const key = this.firstKey(pgno);
    if (key === 'index' || key === 'other') return { kind: key };
    if (key === undefined) return { kind: 'table', root: undefined };
    for (const root of this.tableRoots()) if (this.reaches(root, key, pgno)) return { kind: 'table', root };
    return { kind: 'table', root: undefined };
  }

  /** The roots whose trees are table b-trees (rowid tables and sqlite_schema); the others are index b-trees. */
  tableRoots(): number[] {
    this.learned.tables ??= this.roots.filter((r) => this.table(r) !== undefined);
    return this.learned.tables;
  }

  private read(pgno: number): number | undefined {
    const { file, page } = this;
    if (pgno < 1 || pgno > file.pageCount) return undefined;
    if (fs.readSync(file.fd, page, 0, file.pageSize, (pgno - 1) * file.pageSize) !== file.pageSize) return undefined;
    this.onRead();
    return pgno === 1 ? DB_HEADER_SIZE : 0;
  }

  /** The rowid of the first cell of a table page (read fresh: a leaf is not kept); undefined for an empty one. */
  private firstKey(pgno: number): bigint | 'index' | 'other' | undefined {
    const hdr = this.read(pgno);
    if (hdr === undefined) return 'other';
    const { page } = this;
    const type = page[hdr];
    if (type === INDEX_LEAF || type === INDEX_INTERIOR) return 'index';
    if (type !== TABLE_LEAF && type !== TABLE_INTERIOR) return 'other';
    if (page.readUInt16BE(hdr + 3) === 0) return undefined;
    const at = page.readUInt16BE(hdr + (type === TABLE_LEAF ? 8 : 12));
    if (at >= this.file.usableSize) return undefined;
    if (type === TABLE_INTERIOR) return BigInt.asIntN(64, varint(page, at + 4).value);
    const size = varint(page, at);
    return BigInt.asIntN(64, varint(page, at + size.len).value);
  }

  /** A table page parsed for descent (kept: the upper levels serve every descent), undefined for anything else. */
  private table(pgno: number): TablePage | undefined {
    const { parsed } = this.learned;
    if (parsed.has(pgno)) return parsed.get(pgno);
    let out: TablePage | undefined;
    const hdr = this.read(pgno);
    if (hdr !== undefined) {
      const { page } = this;
      const type = page[hdr];
      if (type === TABLE_LEAF) out = { leaf: true, keys: [], kids: [] };
      else if (type === TABLE_INTERIOR) out = this.interior(hdr);
    }
    parsed.set(pgno, out);
    return out;
  }

  private interior(hdr: number): TablePage | undefined {
    const { page, file } = this;
    const cells = page.readUInt16BE(hdr + 3);
    const pointers = hdr + 12;
    if (pointers + 2 * cells > file.usableSize) return undefined;
    const keys: bigint[] = [];
    const kids: number[] = [];
    for (let i = 0; i < cells; i++) {
      const at = page.readUInt16BE(pointers + 2 * i);
      if (at < pointers + 2 * cells || at + 4 >= file.usableSize) return undefined;
      kids.push(page.readUInt32BE(at));
      keys.push(BigInt.asIntN(64, varint(page, at + 4).value));
    }
    kids.push(page.readUInt32BE(hdr + 8));
    return { leaf: false, keys, kids };
  }

  /** True when SQLite's descent for `key` from `root` passes through `target`. */
  private reaches(root: number, key: bigint, target: number): boolean {
    let pgno = root;
    for (let depth = 0; depth <= MAX_DEPTH; depth++) {
      if (pgno === target) return true;
      const t = this.table(pgno);
      if (t === undefined || t.leaf) return false;
      // The first cell whose key is at least `key` holds it in its left child; past them all, the right-most child.
      let lo = 0;
      let hi = t.keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((t.keys[mid] as bigint) < key) lo = mid + 1;
        else hi = mid;
      }
      pgno = t.kids[lo] as number;
    }
    return false;
  }
}

/**
 * Page owners answered per page: a table page by TableSeeker's descent; an index page by one walk of the index
 * b-trees only (the tables, usually most of the file, are not walked); a page that is no b-tree page by nobody. A
 * table page no descent places, or an index page the index walk misses, runs `walk` (every tree) once, which then
 * answers every page; undefined from it (a damaged file) places nothing, sending the caller to its conservative path.
 */
export function seekingOwners<T>(
  file: RawDbFile,
  roots: ReadonlyMap<number, T>,
  walk: (only?: ReadonlyMap<number, T>) => PageOwners<T> | undefined,
  onRead: () => void,
  learned: Learned<T> = { parsed: new Map(), placed: new Map() },
): PageOwners<T> {
  const seeker = new TableSeeker(file, [...roots.keys()], onRead, learned);
  const memo = learned.placed;
  const everything = (pgno: number): T | undefined => {
    learned.all ??= { owners: walk() };
    return learned.all.owners?.get(pgno);
  };
  const place = (pgno: number): T | undefined => {
    const direct = roots.get(pgno);
    if (direct !== undefined) return direct;
    const p = seeker.place(pgno);
    if (p.kind === 'other') return undefined;
    if (p.kind === 'table') return p.root === undefined ? everything(pgno) : roots.get(p.root);
    if (learned.indexes === undefined) {
      const tables = new Set(seeker.tableRoots());
      const only = new Map([...roots].filter(([root]) => !tables.has(root)));
      learned.indexes = walk(only) ?? { get: () => undefined, has: () => false };
    }
    return learned.indexes.get(pgno) ?? everything(pgno);
  };
  const get = (pgno: number): T | undefined => {
    if (learned.all !== undefined) return learned.all.owners?.get(pgno);
    if (!memo.has(pgno)) memo.set(pgno, place(pgno));
    return memo.get(pgno);
  };
  return { get, has: (pgno) => get(pgno) !== undefined };
}

/**
 * Where pages sit in the b-trees of one file, as learned by placing them: kept across opens of a file that does not
 * change (a diff's kept side), it spares a later diff the reads an earlier one made. Placements learned under other
 * roots (another schema) are dropped, never reused.
 */
export class Placements {
  /** The roots the placements were learned under, and what was learned. */
  current: { roots: ReadonlyMap<number, unknown>; learned: Learned<unknown> } | undefined;
}

const shared = new WeakMap<RawDbFile, Placements>();

/**
 * Makes every placement of pages on `file` (an open of a file that does not change) start from, and add to, `kept`.
 * Without it each open file learns on its own.
 */
export function placeWith(file: RawDbFile, kept: Placements): void {
  shared.set(file, kept);
}

function sameRoots<T>(a: ReadonlyMap<number, unknown>, b: ReadonlyMap<number, T>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of b) if (a.get(k) !== v) return false;
  return true;
}

/**
 * The owner of each page of the b-trees rooted at `roots`, answered once per file and set of roots (the diff asks
 * for table ownership and again for row narrowing; a file given placeWith, in every later diff of it too) and per
 * page (seekingOwners): a table page by descending its own first key from the roots (about depth × tables reads), an
 * index page by walking the index b-trees only, and walkBtreeOwners of every tree only for a page neither places.
 * So the cost follows the changed pages and the indexes' fan-out, not the tables' size. `onRead` hears of every
 * page read.
 */
export function mapBtreePagesOnce<T>(
  file: RawDbFile,
  roots: ReadonlyMap<number, T>,
  onRead: (pages: number) => void,
): PageOwners<T> {
  let kept = shared.get(file);
  if (kept === undefined) {
    kept = new Placements();
    shared.set(file, kept);
  }
  if (kept.current === undefined || !sameRoots(kept.current.roots, roots))
    kept.current = { roots, learned: { parsed: new Map(), placed: new Map() } };
  return seekingOwners(
    file,
    roots,
    (only) => {
      const w = walkBtreeOwners(file, only ?? roots);
      onRead(w.pagesRead);
      return w.owners;
    },
    () => onRead(1),
    kept.current.learned as Learned<T>,
  );
}
