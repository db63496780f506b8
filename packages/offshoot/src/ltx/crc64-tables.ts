// The slicing tables of CRC-64/GO-ISO (reflected polynomial 0xD800000000000000), the 64-bit entries as u32 halves:
// table k maps a byte to its register after k further zero bytes, which lets k + 1 bytes be folded per step.

const POLY_HI = 0xd8000000;

/** `count` slicing tables (256 entries each) as parallel low and high halves; table 0 is the byte-at-a-time table. */
export function crc64SlicingTables(count: number): { lo: Uint32Array[]; hi: Uint32Array[] } {
  const lo = Array.from({ length: count }, () => new Uint32Array(256));
  const hi = Array.from({ length: count }, () => new Uint32Array(256));
  const lo0 = lo[0] as Uint32Array;
  const hi0 = hi[0] as Uint32Array;
  for (let i = 0; i < 256; i++) {
    let l = i;
    let h = 0;
    for (let j = 0; j < 8; j++) {
      const bit = l & 1;
      l = ((l >>> 1) | (h << 31)) >>> 0;
      h >>>= 1;
      if (bit) h = (h ^ POLY_HI) >>> 0;
    }
    lo0[i] = l;
    hi0[i] = h;
  }
  for (let k = 1; k < count; k++) {
    const pl = lo[k - 1] as Uint32Array;
    const ph = hi[k - 1] as Uint32Array;
    const tl = lo[k] as Uint32Array;
    const th = hi[k] as Uint32Array;
    for (let i = 0; i < 256; i++) {
      const l = pl[i] as number;
      const h = ph[i] as number;
      const idx = l & 0xff;
      tl[i] = ((lo0[idx] as number) ^ ((l >>> 8) | (h << 24))) >>> 0;
      th[i] = ((hi0[idx] as number) ^ (h >>> 8)) >>> 0;
    }
  }
  return { lo, hi };
}
