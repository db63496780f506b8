import { fail } from '../core/errors.js';
import type { Ref } from '../core/ref.js';
import { headIdentity } from '../ops/live-branch.js';
import type { OpsContext } from '../ops/context.js';
import {
  backdateAndFingerprint,
  fingerprintOf,
  type Fingerprint,
  sameFingerprint,
  writeSidecar,
} from '../sqlite/checkout-sidecar.js';
import { writePageSums } from '../sqlite/page-sums.js';
import { FrozenCheckout } from '../sqlite/quiesce.js';
import type { SessionSink } from './session-sink.js';

/** How long a closing session waits for the checkout to be still before giving up on re-stamping it. */
const RESTAMP_BUSY_MS = 250;

/**
 * After a verified-clean stop of capture (nothing pending, the head is our last flush), records the checkout as
 * exactly the durable head, so the next open, checkout or reconnection proves it clean without reading it. Done
 * under a FrozenCheckout so no write can slip between the stat and the stamp; and only while the main file still has
 * the fingerprint capture left it with (`stopped`), since between capture letting go and the freeze another
 * connection may have committed (the freeze's checkpoint folds such a commit into the main file, which changes its
 * fingerprint). A busy or changed checkout is not stamped (BUSY). Returns the fingerprint stamped.
 */
export async function restampClean(
  ctx: OpsContext,
  path: string,
  ref: Ref,
  sink: SessionSink,
  stopped: Fingerprint,
): Promise<Fingerprint> {
  const frozen = FrozenCheckout.open(path, RESTAMP_BUSY_MS);
  try {
    if (!sameFingerprint(fingerprintOf(path), stopped))
      throw fail('BUSY', `${path} was written after capture stopped`, {
        retryable: true,
        hint: 'the next open or reconnection captures what was written',
      });
    const sums = sink.pageSums;
    const fp = backdateAndFingerprint(path, ctx.now().getTime());
    const version = await writePageSums(path, sums);
    await writeSidecar(path, {
      ...headIdentity(ref),
      ltx_checksum: sink.currentChecksum.toString(16),
      pages_version: version,
      page_size: sums.pageSize,
      commit: sums.pageCount,
      ...fp,
    });
    return fp;
  } finally {
    frozen.release();
  }
}
