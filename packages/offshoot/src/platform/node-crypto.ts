import type * as NodeCrypto from 'node:crypto';
import { createRequire } from 'node:module';

let loaded: typeof NodeCrypto | undefined;

/**
 * node:crypto, loaded on first use rather than when a module that may need it loads: evaluating it costs a command
 * ~2 ms at start-up, and a listing such as `status` hashes nothing and names no temp file.
 */
export function nodeCrypto(): typeof NodeCrypto {
  loaded ??= createRequire(import.meta.url)('node:crypto') as typeof NodeCrypto;
  return loaded;
}
