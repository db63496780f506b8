// A raw LZ4 block decoder in plain JavaScript that writes into a caller's buffer: the decoder's fast path, with no
// native call and no allocation per page. Short literals and matches are byte loops (no view object per copy); long
// ones are memory copies, a run of one repeated byte (offset 1, SQLite's zero-filled free space) is a fill, and a
// longer periodic run is a few copies of doubling size rather than a byte loop.

const fill = Uint8Array.prototype.fill;

/**
 * Decodes `src` (one complete raw LZ4 block) into out[at, at + max) and returns the decoded length, or -1 for any
 * malformed block (a bad offset, a length past either end); the caller then takes the general path.
 */
export function decodeBlockInto(src: Uint8Array, out: Uint8Array, at: number, max: number): number {
  const end = src.length;
  const limit = at + max;
  let i = 0;
  let o = at;
  while (i < end) {
    const token = src[i++] as number;
    let lit = token >>> 4;
    if (lit === 15) {
      let b: number;
      do {
        if (i >= end) return -1;
        b = src[i++] as number;
        lit += b;
      } while (b === 255);
    }
    if (i + lit > end || o + lit > limit) return -1;
    if (lit > 32) {
      out.set(src.subarray(i, i + lit), o);
      i += lit;
      o += lit;
    } else {
      for (const stop = i + lit; i < stop; ) out[o++] = src[i++] as number;
    }
    if (i === end) break;
    if (i + 2 > end) return -1;
    const offset = (src[i] as number) | ((src[i + 1] as number) << 8);
    i += 2;
    if (offset === 0 || offset > o - at) return -1;
    let len = (token & 15) + 4;
    if ((token & 15) === 15) {
      let b: number;
      do {
        if (i >= end) return -1;
        b = src[i++] as number;
        len += b;
      } while (b === 255);
    }
    if (o + len > limit) return -1;
    const from = o - offset;
    if (len <= 32) {
      for (let k = 0; k < len; k++) out[o + k] = out[from + k] as number;
    } else if (offset >= len) {
      out.copyWithin(o, from, from + len);
    } else if (offset === 1) {
      fill.call(out, out[from] as number, o, o + len);
    } else {
      // A periodic run (offset < length): each copy doubles what is written, so no copy overlaps its source.
      let done = 0;
      while (done < len) {
        const n = Math.min(done + offset, len - done);
        out.copyWithin(o + done, from, from + n);
        done += n;
      }
    }
    o += len;
  }
  return o - at;
}
