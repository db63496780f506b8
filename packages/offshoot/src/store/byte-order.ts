/**
 * Sorts keys in place in byte order (UTF-8), as S3 lists them. Keys without a surrogate (every character in the Basic
 * Multilingual Plane) sort the same by UTF-16 code unit, the engine's own string order, which needs no encoding.
 */
export function sortByteOrder(keys: string[]): string[] {
  if (!keys.some((k) => /[\uD800-\uDFFF]/.test(k))) return keys.sort();
  const bytes = new Map(keys.map((k) => [k, Buffer.from(k)]));
  return keys.sort((a, b) => Buffer.compare(bytes.get(a) as Buffer, bytes.get(b) as Buffer));
}
