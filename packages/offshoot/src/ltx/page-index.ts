/** The LTX page index, kept in growable typed arrays so millions of pages cost a few bytes each. */
export class PageIndex {
  private pgnos = new Uint32Array(1024);
  private offsets = new Float64Array(1024);
  private sizes = new Uint32Array(1024);
  private n = 0;

  /** Number of entries. */
  get length(): number {
    return this.n;
  }

  /** Appends an entry; callers add pages in ascending pgno order. */
  add(pgno: number, offset: number, size: number): void {
    if (this.n === this.pgnos.length) {
      const grow = <T extends Uint32Array | Float64Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.pgnos = grow(this.pgnos, (n) => new Uint32Array(n));
      this.offsets = grow(this.offsets, (n) => new Float64Array(n));
      this.sizes = grow(this.sizes, (n) => new Uint32Array(n));
    }
    this.pgnos[this.n] = pgno;
    this.offsets[this.n] = offset;
    this.sizes[this.n] = size;
    this.n++;
  }

  /**
   * The on-disk index: uvarint (pgno, offset, size) triples, a uvarint 0 terminator, then a u64 BE
   * holding the byte length of the varint area (terminator included).
   */
  encode(): Buffer {
    const out = Buffer.allocUnsafe(this.n * 3 * 10 + 1 + 8);
    let p = 0;
    const put = (v: number): void => {
      while (v >= 0x80) {
        out[p++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      out[p++] = v;
    };
    for (let i = 0; i < this.n; i++) {
      put(this.pgnos[i] as number);
      put(this.offsets[i] as number);
      put(this.sizes[i] as number);
    }
    out[p++] = 0;
    out.writeBigUInt64BE(BigInt(p), p);
    return out.subarray(0, p + 8);
  }
}
