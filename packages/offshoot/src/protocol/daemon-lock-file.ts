import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The daemon lock's name under the checkout root; the local backend hides `.lock` names from listings. */
export const DAEMON_LOCK_NAME = 'daemon.lock';

/** What the lock of the daemon serving a store says: its pid, socket and start time. */
export interface DaemonLockContent {
  pid: number;
  socket: string;
  started_at: string;
}

/** The path of a store's daemon lock under its checkout root. */
export function daemonLockPath(checkoutRoot: string): string {
  return join(checkoutRoot, DAEMON_LOCK_NAME);
}

/** Reads a daemon lock file; undefined when it is missing or unreadable. */
export async function readDaemonLock(path: string): Promise<DaemonLockContent | undefined> {
  try {
    const c = JSON.parse(await readFile(path, 'utf8')) as DaemonLockContent;
    return Number.isInteger(c.pid) && c.pid > 0 ? c : undefined;
  } catch {
    return undefined;
  }
}
