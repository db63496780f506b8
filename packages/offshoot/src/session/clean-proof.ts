import type { Ref } from '../core/ref.js';
import { headIdentity } from '../ops/live-branch.js';
import { readSidecar, sameIdentity, type Sidecar, stillFingerprinted } from '../sqlite/checkout-sidecar.js';
import { readPageSums, trustedPageSums, type PageSums } from '../sqlite/page-sums.js';

/** The durable head's page sums and checksum, as the checkout's sidecars record them, and an O(1) re-check. */
export interface HeadBaseline {
  sums: PageSums;
  checksum: bigint;
  /**
   * True while the checkout is still exactly the head: its fingerprint (size, mtime, inode) unchanged since it was
   * stamped, checked without reading the file; the engine calls it under its lock.
   */
  stillClean: () => boolean;
}

/**
 * The head's page sums when the checkout's sidecars (`written`: the ones the caller itself just put at the path, not
 * read back) describe the ref's head (identity equal to the head, page sums
 * consistent with the recorded checksum), or undefined. They seed a session's capture: with the checkout unchanged
 * since (`stillClean`) capture starts without copying or scanning the file, so opening a clean checkout costs the
 * same at any size; with it changed, they are the baseline a rescan is compared with.
 */
export async function headBaseline(
  path: string,
  ref: Ref,
  written?: { sidecar: Sidecar; sums: PageSums },
): Promise<HeadBaseline | undefined> {
  const sc = written?.sidecar ?? readSidecar(path);
  if (!sameIdentity(sc, headIdentity(ref)) || sc?.ltx_checksum === undefined || sc.mtime_ns === undefined)
    return undefined;
  const sums = trustedPageSums(written?.sums ?? (await readPageSums(path)), sc);
  if (!sums) return undefined;
  const checksum = BigInt('0x' + sc.ltx_checksum);
  const stillClean = (): boolean => stillFingerprinted(path, sc);
  return { sums, checksum, stillClean };
}
