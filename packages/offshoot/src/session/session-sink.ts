import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { CaptureSink } from '../capture/sink.js';
import { foldPage, lockPgno, pageChecksum } from '../ltx/checksum.js';
import { diffPageSums, FileSource, geometryOf, scanPageSums, selectedPagesOf } from '../sqlite/page-scan.js';
import { PageSums, SumsBaseline } from '../sqlite/page-sums.js';
import type { WalTransaction } from '../sqlite/wal-reader.js';

/** What one flush takes from the sink: the pages changed since the last durable state and the checksums around them. */
export interface FlushBatch {
  pageSize: number;
  commit: number;
  /** Changed pages, ascending, with their latest bytes. */
  pages: Array<[number, Buffer]>;
  preApplyChecksum: bigint;
  postApplyChecksum: bigint;
  /** A full image of the state a snapshot must start from (the last rebase copy), or undefined: the durable head. */
  rebaseImage: string | undefined;
  /** True when only a snapshot may follow (nothing durable to chain a segment onto). */
  forceSnapshot: boolean;
  /** Rebase generation at take time; a rebase racing the upload invalidates the batch's bookkeeping. */
  generation: number;
}

/**
 * The session's capture sink. Instead of a full replica it keeps per-page checksums of the captured state (so the
 * rolling LTX checksum folds old pages out and new ones in, O(changed)), the pages changed since the last flush,
 * and, after a rebase, the rebase copy as the base for the next snapshot.
 */
export class SessionSink implements CaptureSink {
  private pageSize = 0;
  private commit = 0;
  private sums = new PageSums(4096, new BigUint64Array(0));
  /** False while the sums' arrays are another's (a cache entry's, seeded by seedClean): apply copies them first. */
  private ownsSums = true;
  /** How the sums stand against the checkout's `.pages` file they were seeded from, when they were. */
  private onDisk: SumsBaseline | undefined;
  private checksum = 0n;
  private flushChecksum = 0n;
  private pending = new Map<number, Buffer>();
  private image: string | undefined;
  private force = true;
  private gen = 0;
  /** Batches taken by a flush and not yet committed or restored. */
  private outstanding = 0;

  constructor(private readonly scratchDir: string) {}

  /** Seeds the sink from a checkout proven identical to the durable head (no rebase, no copy, no scan). */
  seedClean(sums: PageSums, checksum: bigint): void {
    this.pageSize = sums.pageSize;
    this.commit = sums.pageCount;
    // Captured pages change checksums without hashing the page, so the sidecar's fast hashes cannot come along.
    this.sums = sums.withoutHashes();
    this.ownsSums = false;
    this.onDisk = sums.file !== undefined ? new SumsBaseline(sums.file, sums.pageCount) : undefined;
    this.checksum = checksum;
    this.flushChecksum = checksum;
    this.force = false;
  }

  /** Pages captured but not yet durable. */
  get pendingPages(): number {
    return this.pending.size;
  }

  /** Bytes of the pages captured but not yet durable. */
  get pendingBytes(): number {
    return this.pending.size * this.pageSize;
  }

  /** True when a flush has something to write. */
  get dirty(): boolean {
    return this.pending.size > 0 || this.force;
  }

  /** The rolling checksum of everything captured so far. */
  get currentChecksum(): bigint {
    return this.checksum;
  }

  /**
   * Per-page checksums of everything captured so far; with the record of which changed since the `.pages` file they
   * were seeded from, so writing them patches only those entries (writePageSums).
   */
  get pageSums(): PageSums {
    const s = this.sums;
    return this.onDisk === undefined ? s : new PageSums(s.pageSize, s.sums, undefined, this.onDisk);
  }

  /** Rebases performed on this sink. */
  get generation(): number {
    return this.gen;
  }

  // Sums apply may write, holding at least pageCount pages: a seeded sink's are the cache entry's until its first
  // write, and a copy leaves room to grow, so a file growing a page a commit copies its sums (2 MiB at 1 GiB) once in
  // a while, not at every commit.
  private writableSums(pageCount: number): PageSums {
    const s = this.sums;
    if (this.ownsSums) {
      if (s.pageCount >= pageCount) return s;
      const grown = s.grownInPlace(pageCount);
      if (grown !== undefined) return grown;
    }
    this.ownsSums = true;
    const n = Math.max(pageCount, s.pageCount);
    return s.resized(n, Math.max(256, n >> 4));
  }

  /** Folds one committed transaction into the checksum and the pending page set (last write of a page wins). */
  async apply(pageSize: number, txn: WalTransaction): Promise<void> {
    if (this.pageSize === 0) {
      this.pageSize = pageSize;
      this.sums = new PageSums(pageSize, new BigUint64Array(0));
      this.ownsSums = true;
      this.onDisk = undefined;
    }
    const disk = this.onDisk;
    const lock = lockPgno(pageSize);
    const latest = new Map<number, Buffer>();
    for (const f of txn.frames) latest.set(f.pgno, f.data);
    const prevCommit = this.commit;
    const newCommit = txn.commitSize;
    let sums = this.writableSums(newCommit);
    let c = this.checksum === 0n ? foldPage(0n, 0n) : this.checksum;
    for (const [pgno, data] of latest) {
      if (pgno === lock) continue;
      const old = pgno <= prevCommit ? sums.get(pgno) : undefined;
      if (old) c = foldPage(c, old);
      if (pgno <= newCommit) {
        const ck = pageChecksum(pgno, data);
        c = foldPage(c, ck);
        sums.sums[pgno - 1] = ck;
        disk?.changed.add(pgno);
        this.pending.set(pgno, data);
      }
    }
    for (let p = newCommit + 1; p <= prevCommit; p++) {
      const old = sums.get(p);
      if (p !== lock && old && !latest.has(p)) c = foldPage(c, old);
    }
    for (let p = prevCommit + 1; p <= newCommit; p++) {
      // Pages the file grew by without a frame of their own read as zeros.
      if (p !== lock && !latest.has(p)) {
        const ck = pageChecksum(p, Buffer.alloc(pageSize));
        c = foldPage(c, ck);
        sums.sums[p - 1] = ck;
        disk?.changed.add(p);
        this.pending.set(p, Buffer.alloc(pageSize));
      }
    }
    if (newCommit < sums.pageCount) sums = sums.resized(newCommit);
    disk?.resizedTo(newCommit);
    for (const p of this.pending.keys()) if (p > newCommit) this.pending.delete(p);
    this.sums = sums;
    this.commit = newCommit;
    this.checksum = c;
  }

  /**
   * Re-baselines from a full copy of the main file. With a baseline to compare with (the sums of a state that is
   * durable or pending here, no snapshot owed, no flush in flight) the pages that differ from it join the pending
   * ones and the next flush is still a segment; otherwise the sink rescans, forgets pending pages and demands a
   * snapshot.
   */
  async rebase(snapshotPath: string): Promise<void> {
    if (!this.force && this.outstanding === 0 && (await this.rebaseOnBaseline(snapshotPath))) return;
    const image = join(this.scratchDir, `rebase-${this.gen + 1}.db`);
    await copyFile(snapshotPath, image);
    const src = new FileSource(image);
    try {
      const g = geometryOf(src, src.size, image);
      this.sums = scanPageSums(src, g);
      this.ownsSums = true;
      this.onDisk = undefined;
      this.pageSize = g.pageSize;
      this.commit = g.pageCount;
    } finally {
      src.close();
    }
    this.checksum = this.sums.rollingChecksum();
    if (this.image) await rm(this.image, { force: true });
    this.image = image;
    this.pending = new Map();
    this.force = true;
    this.gen++;
  }

  // Every page of the copy whose checksum differs from the captured state's, or that was pending, becomes pending
  // with the copy's bytes; the checksum to flush from stays the durable one. False when the page size changed.
  private async rebaseOnBaseline(snapshotPath: string): Promise<boolean> {
    const src = new FileSource(snapshotPath);
    try {
      const g = geometryOf(src, src.size, snapshotPath);
      if (g.pageSize !== this.pageSize) return false;
      const { changed, sums } = diffPageSums(src, g, this.sums);
      const lock = lockPgno(g.pageSize);
      const wanted = new Set(changed);
      for (const p of this.pending.keys()) if (p <= g.pageCount && p !== lock) wanted.add(p);
      const pending = new Map<number, Buffer>();
      for (const [pgno, data] of selectedPagesOf(
        src,
        g,
        [...wanted].sort((a, b) => a - b),
      ))
        pending.set(pgno, Buffer.from(data));
      this.pending = pending;
      this.sums = sums;
      this.ownsSums = true;
      for (const p of changed) this.onDisk?.changed.add(p);
      this.onDisk?.resizedTo(g.pageCount);
      this.commit = g.pageCount;
      this.checksum = sums.rollingChecksum();
      this.gen++;
      return true;
    } finally {
      src.close();
    }
  }

  /** Takes the pending pages for a flush; they come back with restore() if the flush fails. */
  take(): FlushBatch {
    const pages = [...this.pending.entries()].sort((a, b) => a[0] - b[0]);
    this.pending = new Map();
    this.outstanding++;
    return {
      pageSize: this.pageSize,
      commit: this.commit,
      pages,
      preApplyChecksum: this.flushChecksum,
      postApplyChecksum: this.checksum,
      rebaseImage: this.image,
      forceSnapshot: this.force,
      generation: this.gen,
    };
  }

  /** Puts a failed flush's pages back under anything captured since (newer bytes win). */
  restore(batch: FlushBatch): void {
    this.outstanding--;
    if (batch.generation !== this.gen) return;
    for (const [pgno, data] of batch.pages)
      if (!this.pending.has(pgno) && pgno <= this.commit) this.pending.set(pgno, data);
  }

  /** Records a durable flush: its post-apply checksum is the new base, and a used rebase image is dropped. */
  async committed(batch: FlushBatch): Promise<void> {
    this.outstanding--;
    if (batch.generation !== this.gen) return;
    this.flushChecksum = batch.postApplyChecksum;
    this.force = false;
    if (batch.rebaseImage !== undefined && this.image === batch.rebaseImage) {
      this.image = undefined;
      await rm(batch.rebaseImage, { force: true });
    }
  }
}
