import { createXXHash64 } from 'hash-wasm';

/**
 * A PageHasher on hash-wasm's xxHash64. Imported statically from here, and this module only dynamically, so the
 * bundle holds xxHash64 alone and loads it only for a command that hashes pages. Its type is spelled out, not
 * imported: page-hash.ts, which declares PageHasher, loads this module.
 */
export async function createPageHasher(): Promise<{ hash(page: Uint8Array, out: Uint32Array, i: number): void }> {
  const h = await createXXHash64(0, 0);
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
}
