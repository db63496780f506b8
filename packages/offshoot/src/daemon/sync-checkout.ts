import type { Target } from '../core/target.js';
import { fsyncDatabase } from '../sqlite/sync-database.js';
import type { SessionTable } from './session-table.js';

/**
 * Puts a kept ephemeral fork's checkout on the disk (never synced while it was ephemeral): through the session open
 * on it here, if any, whose capture holds connections on the file and syncs it from then on; else directly.
 */
export async function syncCheckout(sessions: SessionTable, t: Target, path: string): Promise<void> {
  const slot = sessions.get(t);
  if (slot !== undefined && slot.state === 'open') await slot.session.syncCheckout();
  else await fsyncDatabase(path);
}
