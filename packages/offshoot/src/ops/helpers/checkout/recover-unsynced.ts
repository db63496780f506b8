import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncPath, tempPathFor } from '../../../platform/atomic-file.js';
import { bootId } from '../../../platform/boot-id.js';
import { fingerprintIfAny, sameFingerprint } from '../../../sqlite/checkout-sidecar.js';
import { cloneOrCopy } from '../../../sqlite/clone-file.js';
import { fsyncDatabase } from '../../../sqlite/sync-database.js';
import { walBytes } from '../../../sqlite/wal-bytes.js';
import { WAL_HEADER_SIZE } from '../../../sqlite/wal-header.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import { cachedChain } from '../chain/materialize.js';
import type { OpsContext } from '../context/context.js';
import { checkoutPath } from '../context/paths.js';
import { type UnsyncedNote, listUnsyncedNotes, removeUnsyncedNote } from './unsynced-checkout.js';
import { asidePathFor } from './aside-path.js';

/**
 * Makes the checkout a note names whole again, and removes the note. In the boot the copy was placed in, its data is
 * in the page cache whatever became of the process that placed it: the file is synced. After a new boot the copy may
 * be lost (zeros, a short file, no file): the main file is rebuilt from the store at the head it was copied from, and
 * the -wal, which the placing process pinned until the copy was on the disk, replayed over it by SQLite. One case
 * reads otherwise: a main file written since its placement under a -wal that holds no frames was checkpointed whole
 * (SQLite syncs the main file before it empties or deletes a -wal), so it is kept as it is. A main file written since
 * its placement beside frames is moved aside, never deleted (its writer's checkpoint may have run before the -wal was
 * restarted, once the placing process had died), and the warning names it. A note of a branch that is gone is
 * removed.
 */
export async function recoverUnsynced(ctx: OpsContext, note: UnsyncedNote): Promise<void> {
  const path = checkoutPath(ctx.checkoutRoot, note.db, note.branch);
  const name = `${note.db}@${note.branch}`;
  if (note.boot_id === bootId()) {
    if (existsSync(path)) await fsyncDatabase(path);
    await removeUnsyncedNote(ctx.checkoutRoot, note);
    return;
  }
  const now = fingerprintIfAny(path);
  const written = now !== undefined && !sameFingerprint(now, note.fingerprint);
  if (written && walBytes(path) <= WAL_HEADER_SIZE) {
    await removeUnsyncedNote(ctx.checkoutRoot, note);
    return;
  }
  // A branch destroyed since (a destroy that died before it removed the note) has nothing left to rebuild.
  const cur = await ctx.store.tryGetRef(note.db, note.branch);
  if (cur === undefined || cur.ref.deleting) {
    await removeUnsyncedNote(ctx.checkoutRoot, note);
    return;
  }
  const id = note.identity;
  const chain = await new ChainResolver(ctx.store, { sizes: false }).resolve(id.lineage, id.txid);
  const entry = await cachedChain(ctx, note.db, chain, `recover ${name}`);
  const tmp = tempPathFor(path);
  try {
    await cloneOrCopy(entry.path, tmp, true);
    await fsyncPath(tmp);
    if (written) {
      const aside = asidePathFor(ctx, path);
      await rename(path, aside);
      ctx.warn(
        `the checkout of ${name} may have lost its copy of the head in a power loss: rebuilt from the store and its -wal; the file it had is kept as ${aside}`,
      );
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncPath(dirname(path));
  await removeUnsyncedNote(ctx.checkoutRoot, note);
}

/**
 * Recovers every checkout under the context's root placed unsynced by a process that is gone (see recoverUnsynced):
 * what a daemon does before it serves. Returns what could not be recovered, one line each.
 */
export async function recoverUnsyncedCheckouts(ctx: OpsContext): Promise<string[]> {
  const failed: string[] = [];
  for (const note of listUnsyncedNotes(ctx.checkoutRoot)) {
    await recoverUnsynced(ctx, note).catch((err: Error) =>
      failed.push(`cannot recover the checkout of ${note.db}@${note.branch}: ${err.message}`),
    );
  }
  return failed;
}
