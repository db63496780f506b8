import type { Ref } from '../core/ref.js';
import { headIdentity } from '../ops/helpers/branch/branch-ref.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import { backdateAndFingerprint, writeSidecar } from '../sqlite/checkout-sidecar.js';
import { writePageSums } from '../sqlite/page-sums.js';
import { FrozenCheckout } from '../sqlite/quiesce.js';
import type { SessionSink } from './session-sink.js';

/** How long a closing session waits for the checkout to be still before giving up on re-stamping it. */
const RESTAMP_BUSY_MS = 250;

/**
 * After a verified-clean close (capture stopped clean, nothing pending, the head is our last flush), records the
 * checkout as exactly the durable head, so the next open or checkout proves it clean without reading it. Done under
 * a FrozenCheckout so no write can slip between the stat and the stamp; a busy checkout is simply not stamped.
 */
export async function restampClean(ctx: OpsContext, path: string, ref: Ref, sink: SessionSink): Promise<void> {
  const frozen = FrozenCheckout.open(path, RESTAMP_BUSY_MS);
  try {
    const sums = sink.pageSums;
    const fp = backdateAndFingerprint(path, ctx.now().getTime());
    await writePageSums(path, sums);
    await writeSidecar(path, {
      ...headIdentity(ref),
      ltx_checksum: sink.currentChecksum.toString(16),
      page_size: sums.pageSize,
      commit: sums.pageCount,
      ...fp,
    });
  } finally {
    frozen.release();
  }
}
