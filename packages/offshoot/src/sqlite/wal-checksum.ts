import { fail } from '../core/errors.js';

/**
 * SQLite's WAL checksum: a Fibonacci-weighted running sum over pairs of u32 words, seeded with (s1, s2).
 * Words are read big-endian when bigEndian is set, little-endian otherwise; data.length must be a multiple of 8.
 */
export function walChecksum(data: Uint8Array, bigEndian: boolean, s1: number, s2: number): [number, number] {
  const n = data.byteLength;
  if (n % 8 !== 0) {
    throw fail('INVALID_ARGUMENT', `WAL checksum input is ${n} bytes, not a multiple of 8`, {
      hint: 'checksum whole 8-byte word pairs: the 24-byte header prefix, frame header bytes 0..7, or a whole page',
    });
  }
  const view = new DataView(data.buffer, data.byteOffset, n);
  const le = !bigEndian;
  // Int32 arithmetic with `| 0` wraps mod 2^32 exactly and keeps V8 on its fast integer path.
  let a = s1 | 0;
  let b = s2 | 0;
  for (let i = 0; i < n; i += 8) {
    a = (((a + view.getInt32(i, le)) | 0) + b) | 0;
    b = (((b + view.getInt32(i + 4, le)) | 0) + a) | 0;
  }
  return [a >>> 0, b >>> 0];
}
