import fs from 'node:fs';
import { DB_HEADER_SIZE } from '../db-header.js';
import type { RawDbFile } from './btree-walk.js';

const TABLE_INTERIOR = 0x05;
const TABLE_LEAF = 0x0d;

function readPage(raw: RawDbFile, pgno: number, into: Buffer): boolean {
  return fs.readSync(raw.fd, into, 0, raw.pageSize, (pgno - 1) * raw.pageSize) === raw.pageSize;
}

/** The freelist's pages (trunks and leaves), read from its trunk chain; undefined when the chain looks damaged. */
export function freelistPages(raw: RawDbFile): Set<number> | undefined {
  const page = Buffer.allocUnsafe(raw.pageSize);
  if (!readPage(raw, 1, page)) return undefined;
  const total = page.readUInt32BE(36);
  const free = new Set<number>();
  for (let trunk = page.readUInt32BE(32); trunk !== 0; ) {
    if (trunk > raw.pageCount || free.has(trunk) || free.size > total || !readPage(raw, trunk, page)) return undefined;
    free.add(trunk);
    const n = page.readUInt32BE(4);
    if (8 + 4 * n > raw.usableSize) return undefined;
    for (let i = 0; i < n; i++) free.add(page.readUInt32BE(8 + 4 * i));
    trunk = page.readUInt32BE(0);
  }
  return free.size === total ? free : undefined;
}

/** Reads an SQLite varint at `at`: its value (as a bigint, rowids are signed 64-bit) and its length. */
export function varint(b: Buffer, at: number): { value: bigint; len: number } {
  let v = 0n;
  for (let i = 0; i < 8; i++) {
    const byte = b[at + i] as number;
    v = (v << 7n) | BigInt(byte & 0x7f);
    if (byte < 0x80) return { value: v, len: i + 1 };
  }
  return { value: (v << 8n) | BigInt(b[at + 8] as number), len: 9 };
}

/**
 * The rowids of the cells on a table b-tree page: the rows a leaf holds, [] for an interior page (which holds
 * none); undefined for any other page or a malformed one.
 */
export function tablePageRowids(raw: RawDbFile, pgno: number, page: Buffer): bigint[] | undefined {
  if (!readPage(raw, pgno, page)) return undefined;
  const hdr = pgno === 1 ? DB_HEADER_SIZE : 0;
  const type = page[hdr];
  if (type === TABLE_INTERIOR) return [];
  if (type !== TABLE_LEAF) return undefined;
  const cells = page.readUInt16BE(hdr + 3);
  const pointers = hdr + 8;
  if (pointers + 2 * cells > raw.usableSize) return undefined;
  const out: bigint[] = [];
  for (let i = 0; i < cells; i++) {
    const at = page.readUInt16BE(pointers + 2 * i);
    if (at < pointers + 2 * cells || at >= raw.usableSize) return undefined;
    const size = varint(page, at);
    const rowid = varint(page, at + size.len).value;
    out.push(BigInt.asIntN(64, rowid));
  }
  return out;
}

/** The child pages of a table interior page; [] for a leaf, undefined for any other page or a malformed one. */
export function tablePageChildren(raw: RawDbFile, pgno: number, page: Buffer): number[] | undefined {
  if (!readPage(raw, pgno, page)) return undefined;
  const hdr = pgno === 1 ? DB_HEADER_SIZE : 0;
  const type = page[hdr];
  if (type === TABLE_LEAF) return [];
  if (type !== TABLE_INTERIOR) return undefined;
  const cells = page.readUInt16BE(hdr + 3);
  const pointers = hdr + 12;
  if (pointers + 2 * cells > raw.usableSize) return undefined;
  const out: number[] = [];
  for (let i = 0; i < cells; i++) {
    const at = page.readUInt16BE(pointers + 2 * i);
    if (at < pointers + 2 * cells || at + 4 > raw.usableSize) return undefined;
    out.push(page.readUInt32BE(at));
  }
  out.push(page.readUInt32BE(hdr + 8));
  return out;
}
