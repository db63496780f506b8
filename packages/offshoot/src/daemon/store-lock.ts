import { link, mkdir, rm, writeFile } from 'node:fs/promises';
import { fail } from '../core/errors.js';
import { tempPathFor } from '../platform/atomic-file.js';
import { processAlive } from '../platform/process-alive.js';
import {
  daemonLockPath,
  readDaemonLock as readLock,
  type DaemonLockContent as LockContent,
} from '../protocol/daemon-lock-file.js';

/**
 * One daemon per checkout root (any number per store, each with its own root): an exclusive lock file under the
 * checkout root naming the serving pid and socket, since two daemons sharing checkouts would capture each other's files. It is
 * created complete (written privately, then hard-linked into place, which fails if the name exists), so a reader
 * never sees a half-written lock; a lock whose pid is gone is stale and replaced.
 */
export class StoreLock {
  private constructor(
    readonly path: string,
    private readonly content: LockContent,
  ) {}

  /** Takes the checkout root's daemon lock, or fails BUSY naming the daemon that holds it. */
  static async acquire(checkoutRoot: string, socket: string): Promise<StoreLock> {
    await mkdir(checkoutRoot, { recursive: true });
    const path = daemonLockPath(checkoutRoot);
    const content: LockContent = { pid: process.pid, socket, started_at: new Date().toISOString() };
    const tmp = tempPathFor(path);
    await writeFile(tmp, JSON.stringify(content) + '\n', { mode: 0o600 });
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await link(tmp, path);
          return new StoreLock(path, content);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
        }
        const held = await readLock(path);
        if (held && held.pid !== process.pid && processAlive(held.pid)) {
          throw fail(
            'BUSY',
            `another offshoot daemon (pid ${held.pid}) already uses the checkout root ${checkoutRoot}, serving on ${held.socket}`,
            {
              hint: `use that daemon (-socket ${held.socket}), give this one its own checkout root (-checkouts DIR), or stop it first ('offshoot session shutdown -socket ${held.socket}'); if pid ${held.pid} is not an offshoot daemon, remove ${path}`,
            },
          );
        }
        await rm(path, { force: true });
      }
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** Removes the lock if it is still ours. */
  async release(): Promise<void> {
    const held = await readLock(this.path);
    if (held?.pid === this.content.pid && held.started_at === this.content.started_at)
      await rm(this.path, { force: true });
  }
}
