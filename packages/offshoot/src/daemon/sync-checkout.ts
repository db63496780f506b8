import { fsync } from 'node:fs';
import { promisify } from 'node:util';
import { dbFileFd } from '../capture/db-file-cache.js';
import type { Target } from '../core/target.js';
import { fsyncPath } from '../platform/atomic-file.js';
import type { SessionTable } from './session-table.js';

const fsyncFd = promisify(fsync);

/**
 * Puts a checkout on the disk (a kept ephemeral fork's, never synced while it was ephemeral): through the descriptor
 * this process shares for the file while a session here holds connections on it (closing one of its own would drop
 * their locks), else through a descriptor of its own.
 */
export async function syncCheckout(sessions: SessionTable, t: Target, path: string): Promise<void> {
  const slot = sessions.get(t);
  if (slot !== undefined && slot.state === 'open' && !slot.session.evicted) await fsyncFd(dbFileFd(path));
  else await fsyncPath(path);
}
