import type { WalTransaction } from '../sqlite/wal-reader.js';

/**
 * Where a CaptureEngine delivers what it reads from a live checkout. apply is called at most once per committed
 * transaction, ever (across takeovers, restarts and resumes), so a sink must not rely on replay being idempotent.
 * rebase hands over a full copy of the main database: the sink replaces its replica with it and starts over.
 * The snapshot may already contain pages that later arrive again through apply; applying them must converge.
 */
export interface CaptureSink {
  /** Applies one committed transaction; the engine records its position only after this resolves. */
  apply(pageSize: number, txn: WalTransaction): Promise<void>;
  /** Re-baselines from snapshotPath, a file the engine owns and overwrites on its next rebase. */
  rebase(snapshotPath: string): Promise<void>;
}
