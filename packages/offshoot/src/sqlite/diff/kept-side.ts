import { fingerprintOf } from '../checkout-sidecar.js';
import type { SqliteDatabase } from '../sqlite-database.js';
import { Placements } from './btree-seek.js';
import { readCatalog, type SchemaCatalog } from './schema-catalog.js';
import { readTableShape, type TableShape } from './table-shape.js';

/**
 * What diffs read of one side's file that does not change (a sealed cache entry, a checkout proven clean), kept for
 * the next diff of the same file: its schema, its tables' shapes and row counts, and where its b-tree pages sit.
 */
export interface KeptSide {
  /** Row counts by table, filled as they are counted. */
  counts: Map<string, number>;
  /** The schema catalog, once read. */
  catalog?: SchemaCatalog;
  /** Table shapes by table, filled as they are read. */
  shapes: Map<string, TableShape>;
  /** What placing changed pages in the file's b-trees has learned (page owners, interior pages parsed). */
  placements: Placements;
}

/**
 * Files kept at once. A long-lived process (a daemon, an MCP server, an embedding program) diffs many forks against
 * a few seeds, so it needs only a few: the least recently used is forgotten past this. A kept side holds no file
 * descriptor and no connection; besides the schema it grows only with the pages diffs placed (an answer per changed
 * page, the interior pages their descents parsed) and, when a walk was needed, two 4-byte owner slots per page.
 */
const MAX_FILES = 16;

const kept = new Map<string, KeptSide>();
const reads = { catalogs: 0, shapes: 0 };

/**
 * The kept side of the file at `path` holding the durable state `state` (any string naming it, such as its chain's
 * id), shared by every diff in this process; found by path, state and fingerprint (size, mtime, inode) together,
 * so a file replaced or rewritten at that path is never answered from what was kept of the old one.
 */
export function keptSideOf(path: string, state: string): KeptSide {
  const fp = fingerprintOf(path);
  const key = `${path}\0${state}\0${fp.size}\0${fp.mtime_ns}\0${fp.ino}`;
  let side = kept.get(key);
  if (side === undefined) side = { counts: new Map(), shapes: new Map(), placements: new Placements() };
  else kept.delete(key);
  kept.set(key, side);
  for (const old of kept.keys()) {
    if (kept.size <= MAX_FILES) break;
    kept.delete(old);
  }
  return side;
}

/** The schema catalog of a side: the kept one, else read through db (and kept). */
export function catalogOf(db: SqliteDatabase, side: KeptSide | undefined): SchemaCatalog {
  if (side?.catalog !== undefined) return side.catalog;
  reads.catalogs++;
  const catalog = readCatalog(db);
  if (side !== undefined) side.catalog = catalog;
  return catalog;
}

/** A table's shape on a side: the kept one, else read through db (and kept). */
export function shapeOf(db: SqliteDatabase, table: string, side: KeptSide | undefined): TableShape {
  const known = side?.shapes.get(table);
  if (known !== undefined) return known;
  reads.shapes++;
  const shape = readTableShape(db, table);
  side?.shapes.set(table, shape);
  return shape;
}

/** How many schema catalogs and table shapes of diffs' left sides this process has read from their files, not kept. */
export function keptSideReads(): { catalogs: number; shapes: number } {
  return { ...reads };
}
