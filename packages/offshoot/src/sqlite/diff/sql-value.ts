/** True when two stored values are identical in type and content: 1 (integer), 1.0 (real) and '1' all differ. */
export function sqlValuesEqual(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a !== typeof b) return false;
  if (a instanceof Uint8Array) return b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  return a === b;
}

/** A BLOB's bytes in hex (SQLite hands BLOBs over as Uint8Array). */
export function blobHex(v: Uint8Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
}

/** Orders two stored values the way SQLite's BINARY collation does: NULL, numbers, text (by UTF-8 bytes), blobs. */
export function compareSqlValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return compareNumbers(a as number | bigint, b as number | bigint);
    case 2:
      return compareUtf8(a as string, b as string);
    default:
      return Buffer.compare(a as Uint8Array, b as Uint8Array);
  }
}

function typeRank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'bigint' || typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  return 3;
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return typeof a === 'bigint' ? compareIntReal(a, b as number) : -compareIntReal(b as bigint, a as number);
}

// Exact integer/real comparison: converting a 64-bit integer to a double would round.
function compareIntReal(i: bigint, r: number): number {
  if (r === Infinity) return -1;
  if (r === -Infinity) return 1;
  const floor = Math.floor(r);
  const fi = BigInt(floor);
  if (i < fi) return -1;
  if (i > fi) return 1;
  return floor === r ? 0 : -1;
}

// JS strings compare by UTF-16 code unit; SQLite compares UTF-8 bytes, which order like code points.
// Surrogates (U+D800..DFFF) encode code points above U+FFFF, so they must sort after U+E000..FFFF.
function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return codeUnitRank(ca) - codeUnitRank(cb);
  }
  return a.length - b.length;
}

function codeUnitRank(c: number): number {
  if (c >= 0xe000) return c - 0x800;
  if (c >= 0xd800) return c + 0x2000;
  return c;
}
