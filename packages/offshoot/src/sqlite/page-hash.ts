import type { IHasher } from 'hash-wasm';

/** A fast 64-bit page hash (xxHash64), written as two u32 halves at out[2i], out[2i + 1]. */
export interface PageHasher {
  hash(page: Uint8Array, out: Uint32Array, i: number): void;
}

let loading: Promise<PageHasher> | undefined;

/**
 * The page hasher of the page-sum sidecar (hash-wasm's xxHash64, several GB/s): an at-rest checkpoint hashes every
 * page with it and computes the LTX checksum only of pages whose hash changed. Loaded once, on first use.
 */
export function loadPageHasher(): Promise<PageHasher> {
  loading ??= import('hash-wasm').then(async (m) => {
    const h: IHasher = await m.createXXHash64(0, 0);
    return {
      hash(page, out, i) {
        h.init();
        h.update(page);
        const d = h.digest('binary');
        out[2 * i] = ((d[0] as number) << 24) | ((d[1] as number) << 16) | ((d[2] as number) << 8) | (d[3] as number);
        // A page hash of all zeros means "unknown" in the sidecar; a real one never collides with it in practice.
        out[2 * i + 1] =
          ((d[4] as number) << 24) | ((d[5] as number) << 16) | ((d[6] as number) << 8) | (d[7] as number) | 1;
      },
    };
  });
  return loading;
}
