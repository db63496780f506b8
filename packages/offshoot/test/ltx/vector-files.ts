import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LtxDecoder, decodeAll, type DecodedLtx } from '../../src/ltx/decoder.js';

/** Folder holding the LTX v0.5.1 vectors and their vectors.json. */
export const VECTOR_DIR = fileURLToPath(new URL('../vectors/ltx/', import.meta.url));

/** Per-page facts recorded for a vector. */
export interface VectorPage {
  pgno: number;
  frame_offset: number;
  frame_size: number;
  page_checksum: string;
  lz4_block_stored_uncompressed: boolean;
}

/** Facts recorded for one vector file. */
export interface VectorFacts {
  size: number;
  flags: number;
  page_size: number;
  commit: number;
  min_txid: number;
  max_txid: number;
  timestamp_ms: number;
  is_snapshot: boolean;
  pre_apply_checksum: string;
  post_apply_checksum: string;
  file_checksum: string;
  page_index_offset: number;
  page_index_size_field: number;
  pages: VectorPage[];
  database_after_apply: string;
  database_rolling_checksum: string;
}

/** The parsed vectors.json. */
export const VECTORS = JSON.parse(fs.readFileSync(path.join(VECTOR_DIR, 'vectors.json'), 'utf8')) as {
  chain: string[];
  files: Record<string, VectorFacts>;
};

/** Every vector's file name. */
export const VECTOR_NAMES = Object.keys(VECTORS.files);

/** The bytes of a file in the vector folder. */
export function vectorBytes(name: string): Buffer {
  return fs.readFileSync(path.join(VECTOR_DIR, name));
}

/** A checksum as the 16-digit lowercase hex used in vectors.json. */
export function hex(v: bigint): string {
  return v.toString(16).padStart(16, '0');
}

/** Splits bytes into chunks of varying sizes, so decoders see arbitrary chunk boundaries. */
export function chunked(bytes: Uint8Array, sizes: readonly number[] = [bytes.length]): AsyncIterable<Uint8Array> {
  const parts: Buffer[] = [];
  let off = 0;
  for (let i = 0; off < bytes.length; i++) {
    const n = Math.max(1, sizes[i % sizes.length] as number);
    parts.push(Buffer.from(bytes.subarray(off, off + n)));
    off += n;
  }
  return (async function* () {
    yield* parts;
  })();
}

/** Fully decodes in-memory LTX bytes. */
export function decodeBytes(bytes: Uint8Array, sizes?: readonly number[]): Promise<DecodedLtx> {
  return decodeAll(new LtxDecoder(chunked(bytes, sizes)));
}
