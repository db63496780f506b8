/** A fast 64-bit page hash (xxHash64), written as two u32 halves at out[2i], out[2i + 1]. */
export interface PageHasher {
  hash(page: Uint8Array, out: Uint32Array, i: number): void;
}

let loading: Promise<PageHasher> | undefined;

/**
 * The page hasher of the page-sum sidecar (xxHash64, several GB/s): an at-rest checkpoint hashes every page with it
 * and computes the LTX checksum only of pages whose hash changed. Loaded once, on first use.
 */
export function loadPageHasher(): Promise<PageHasher> {
  loading ??= import('./xxhash64-page-hasher.js').then((m) => m.createPageHasher());
  return loading;
}
