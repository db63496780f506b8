import { copyFile, open, rm } from 'node:fs/promises';
import type { CaptureSink } from '../../src/capture/sink.js';
import type { WalTransaction } from '../../src/sqlite/wal-reader.js';

/**
 * A sink that keeps a replica file: frames are written at (pgno-1)*pageSize, then the file is cut to the commit
 * size; a rebase copies the snapshot over it. No SQLite connection in this process ever opens the replica, so raw
 * descriptors on it are safe to open and close.
 */
export class ReplicaSink implements CaptureSink {
  readonly path: string;
  applies = 0;
  rebases = 0;
  /** When set, apply throws it (and applies nothing). */
  failWith: Error | undefined;

  constructor(path: string) {
    this.path = path;
  }

  async apply(pageSize: number, txn: WalTransaction): Promise<void> {
    if (this.failWith !== undefined) throw this.failWith;
    const fh = await open(this.path, 'r+');
    try {
      for (const f of txn.frames) await fh.write(f.data, 0, pageSize, (f.pgno - 1) * pageSize);
      await fh.truncate(txn.commitSize * pageSize);
    } finally {
      await fh.close();
    }
    this.applies++;
  }

  async rebase(snapshotPath: string): Promise<void> {
    await copyFile(snapshotPath, this.path);
    await rm(`${this.path}-wal`, { force: true });
    await rm(`${this.path}-shm`, { force: true });
    this.rebases++;
  }
}
