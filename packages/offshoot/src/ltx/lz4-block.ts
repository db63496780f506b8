import { createRequire } from 'node:module';
import { fail } from '../core/errors.js';

type Lz4 = typeof import('lz4-napi');
const requireHere = createRequire(import.meta.url);
let native: Lz4 | undefined;

/** lz4-napi, loaded on first use: commands that never touch LTX data never load the native addon. */
function lz4(): Lz4 {
  native ??= requireHere('lz4-napi') as Lz4;
  return native;
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** Compresses `data` into one raw LZ4 block (no size prefix, no frame). */
export function compressBlock(data: Uint8Array): Buffer {
  // lz4-napi prefixes its output with the u32 LE input size; the LZ4 frame wants the bare block.
  return lz4().compressSync(asBuffer(data)).subarray(4);
}

// lz4-napi wants the size word in front of the block; one reused buffer spares an allocation per page.
let scratch = Buffer.allocUnsafe(0x10000 + 4);

/**
 * Decompresses one raw LZ4 block that must yield at most `maxSize` bytes. `dict` holds the bytes that
 * precede the block in the same stream (dependent blocks may copy from them). Any malformed input is CORRUPT.
 */
export function decompressBlock(block: Uint8Array, maxSize: number, dict?: Uint8Array): Buffer {
  if (scratch.length < 4 + block.length) scratch = Buffer.allocUnsafe(Math.max(4 + block.length, 2 * scratch.length));
  const sized = scratch.subarray(0, 4 + block.length);
  sized.writeUInt32LE(maxSize, 0);
  sized.set(block, 4);
  try {
    const { uncompressSync } = lz4();
    return dict === undefined || dict.length === 0 ? uncompressSync(sized) : uncompressSync(sized, dict);
  } catch (err) {
    throw fail('CORRUPT', `invalid LZ4 block: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'the LTX file is damaged; re-fetch or re-create it',
      cause: err,
    });
  }
}
