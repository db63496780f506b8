import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type EncodedHead, headKind, type LiveSource } from '../ops/live-branch.js';
import { writeSegment, writeSnapshot } from './segment-file.js';
import type { FlushBatch, SessionSink } from './session-sink.js';

/**
 * What a session captured since its last durable head, as one flush takes it (the LiveSource the flush verb reads):
 * the sink's pending batch, encoded in the session's scratch as a segment or a snapshot, then committed to the sink
 * once it is durable, or given back to the sink for the next flush.
 */
export class CapturedWrites implements LiveSource {
  private batch: FlushBatch | undefined;
  private file: string | undefined;

  constructor(
    private readonly sink: SessionSink,
    private readonly scratch: string,
  ) {}

  get dirty(): boolean {
    return this.sink.dirty;
  }

  async encode(txid: number, headImage: () => Promise<string>): Promise<EncodedHead> {
    const batch = this.sink.take();
    this.batch = batch;
    const kind = headKind(batch.pages.length, batch.commit, batch.forceSnapshot);
    const out = join(this.scratch, `flush-${txid}.ltx`);
    this.file = out;
    const bytes =
      kind === 'snapshot'
        ? await writeSnapshot(batch, batch.rebaseImage ?? (await headImage()), this.work(), txid, out, Date.now())
        : await writeSegment(batch, txid, out, Date.now());
    return { file: out, kind, bytes, pages: batch.pages.length };
  }

  async settle(written: boolean): Promise<void> {
    // Synchronous: two unlinks in the session's private scratch cost less than their trips to the thread pool.
    if (this.file !== undefined) rmSync(this.file, { force: true });
    rmSync(this.work(), { force: true });
    const batch = this.batch;
    if (batch === undefined) return;
    if (!written) {
      this.sink.restore(batch);
      return;
    }
    try {
      await this.sink.committed(batch);
    } catch (err) {
      this.sink.restore(batch);
      throw err;
    }
  }

  /** Where a snapshot's image is assembled before it is encoded. */
  private work(): string {
    return join(this.scratch, 'snapshot-work.db');
  }
}
