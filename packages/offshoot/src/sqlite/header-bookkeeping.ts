/**
 * Header bytes of page 1 that SQLite rewrites without changing what the database holds, as a journal-mode switch does:
 * the file format versions (18–19), the file change counter (24–27), and the version-valid-for number with the
 * SQLite version that wrote it (92–99).
 */
const BOOKKEEPING: ReadonlyArray<readonly [number, number]> = [
  [18, 20],
  [24, 28],
  [92, 100],
];

/** True when two first pages of a database are equal apart from the header's bookkeeping. */
export function samePage1ApartFromBookkeeping(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) return false;
  let from = 0;
  for (const [start, end] of BOOKKEEPING) {
    if (!a.subarray(from, start).equals(b.subarray(from, start))) return false;
    from = end;
  }
  return a.subarray(from).equals(b.subarray(from));
}
