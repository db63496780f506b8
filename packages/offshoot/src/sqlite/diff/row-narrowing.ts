import { mapBtreePagesOnce } from './btree-seek.js';
import type { PageOwners, RawDbFile } from './btree-walk.js';
import type { DiffStats } from './diff-types.js';
import { freelistPages, tablePageChildren, tablePageRowids } from './leaf-rows.js';
import type { SchemaCatalog } from './schema-catalog.js';

const SCHEMA_ROOT = 1;

interface Side {
  raw: RawDbFile;
  catalog: SchemaCatalog;
  owners: PageOwners<string>;
  free: Set<number>;
}

function side(raw: RawDbFile, catalog: SchemaCatalog, stats: DiffStats): Side | undefined {
  const roots = new Map<number, string>([[SCHEMA_ROOT, 'sqlite_schema']]);
  for (const [name, root] of catalog.rootpages) roots.set(root, name);
  const owners = mapBtreePagesOnce(raw, roots, (n) => {
    stats.pagesRead += n;
  });
  const free = freelistPages(raw);
  return free ? { raw, catalog, owners, free } : undefined;
}

/** True when a changed page is accounted for on this side: a b-tree page, a free page or past the end. */
function placed(s: Side, pgno: number): boolean {
  return pgno > s.raw.pageCount || s.free.has(pgno) || s.owners.has(pgno);
}

function isTable(s: Side, name: string | undefined): name is string {
  return name !== undefined && name !== 'sqlite_schema' && !s.catalog.indexTable.has(name);
}

/**
 * The children of page `p` on side `s` when `p` is a page of table `name` there: a b-tree's pages are those reachable
 * from its root, so each of them is the table's on `s` with no read and descent of its own (placing every child of
 * a changed interior page that way costs a read per child). Undefined when `p` is not the table's page on `s`.
 */
function childrenOfTablePage(
  s: Side,
  name: string,
  p: number,
  page: Buffer,
  stats: DiffStats,
): Set<number> | undefined {
  if (s.owners.get(p) !== name) return undefined;
  const kids = tablePageChildren(s.raw, p, page);
  stats.pagesRead++;
  return kids === undefined ? undefined : new Set(kids);
}

/**
 * The rows that can differ, per table, between two files whose differing pages are `pages`: the rowids on every
 * changed page of the table's own b-tree, on either side, and on every page that belongs to the table on one side
 * only (found below the changed interior pages). A page that is the table's on both sides and unchanged holds the same cells on both, so its rows are equal.
 * Undefined (compare whole tables) when some changed page is neither a b-tree page nor free on a side (an overflow
 * or pointer-map page: its row cannot be told without a scan); a table left out of the map (a page of it that is
 * not a table page) is compared whole.
 */
export function changedRowids(
  left: RawDbFile,
  right: RawDbFile,
  lc: SchemaCatalog,
  rc: SchemaCatalog,
  pages: ReadonlySet<number>,
  stats: DiffStats,
): Map<string, Set<bigint>> | undefined {
  const l = side(left, lc, stats);
  const r = side(right, rc, stats);
  if (l === undefined || r === undefined) return undefined;
  for (const p of pages) if (!placed(l, p) || !placed(r, p)) return undefined;
  const candidates = new Map<string, { l: Set<number>; r: Set<number> }>();
  const want = (name: string) => {
    let c = candidates.get(name);
    if (c === undefined) {
      c = { l: new Set(), r: new Set() };
      candidates.set(name, c);
    }
    return c;
  };
  for (const p of pages) {
    const ln = l.owners.get(p);
    const rn = r.owners.get(p);
    if (isTable(l, ln)) want(ln).l.add(p);
    if (isTable(r, rn)) want(rn).r.add(p);
  }
  // A page can leave a table without its bytes changing (a freed leaf keeps its old cells); then some ancestor's
  // bytes changed. So the children of the table's changed interior pages that are not the table's on the other
  // side are candidates too, and so on down.
  const page = Buffer.allocUnsafe(Math.max(left.pageSize, right.pageSize));
  for (const [name, c] of candidates) {
    for (const [a, b, set] of [
      [l, r, c.l],
      [r, l, c.r],
    ] as const) {
      const queue = [...set];
      while (queue.length > 0) {
        const p = queue.pop() as number;
        const kids = tablePageChildren(a.raw, p, page);
        stats.pagesRead++;
        if (kids === undefined) break;
        const kept = kids.length > 0 ? childrenOfTablePage(b, name, p, page, stats) : undefined;
        for (const kid of kids) {
          if (!kept?.has(kid) && b.owners.get(kid) !== name && !set.has(kid)) {
            set.add(kid);
            queue.push(kid);
          }
        }
      }
    }
  }
  const out = new Map<string, Set<bigint>>();
  table: for (const [name, c] of candidates) {
    const rowids = new Set<bigint>();
    for (const [s, set] of [
      [l, c.l],
      [r, c.r],
    ] as const) {
      for (const p of set) {
        const ids = tablePageRowids(s.raw, p, page);
        stats.pagesRead++;
        if (ids === undefined) continue table;
        for (const id of ids) rowids.add(id);
      }
    }
    out.set(name, rowids);
  }
  return out;
}
