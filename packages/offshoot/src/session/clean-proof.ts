import type { Ref } from '../core/ref.js';
import { headIdentity } from '../ops/helpers/branch/branch-ref.js';
import { fingerprintOf, readSidecar, sameIdentity } from '../sqlite/checkout-sidecar.js';
import { readPageSums, type PageSums } from '../sqlite/page-sums.js';

/** What proves a checkout is exactly the durable head: its page sums, checksum, and an O(1) re-check. */
export interface CleanProof {
  sums: PageSums;
  checksum: bigint;
  /** Re-checks the fingerprint (size, mtime, inode) without reading the file; the engine calls it under its lock. */
  stillClean: () => boolean;
}

/**
 * A proof that a checkout holds exactly the ref's head — sidecar identity equal to the head, page sums consistent
 * with the recorded checksum, fingerprint unchanged — or undefined. With it a session starts capture without
 * copying or scanning the file, so opening a clean checkout costs the same at any size.
 */
export async function cleanProof(path: string, ref: Ref): Promise<CleanProof | undefined> {
  const sc = readSidecar(path);
  if (!sameIdentity(sc, headIdentity(ref)) || sc?.ltx_checksum === undefined || sc.mtime_ns === undefined)
    return undefined;
  const sums = await readPageSums(path);
  const checksum = BigInt('0x' + sc.ltx_checksum);
  if (!sums || sums.rollingChecksum() !== checksum) return undefined;
  const stillClean = (): boolean => {
    try {
      const fp = fingerprintOf(path);
      return fp.size === sc.size && fp.mtime_ns === sc.mtime_ns && fp.ino === sc.ino;
    } catch {
      return false;
    }
  };
  return stillClean() ? { sums, checksum, stillClean } : undefined;
}
