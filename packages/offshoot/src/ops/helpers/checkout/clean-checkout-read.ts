import { existsSync } from 'node:fs';
import type { Ref } from '../../../core/ref.js';
import { checkClean, readSidecar, sameIdentity } from '../../../sqlite/checkout-sidecar.js';
import type { Connection } from '../../../sqlite/connection.js';
import { FrozenCheckout } from '../../../sqlite/quiesce.js';
import { headIdentity, leaseLiveNow } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { checkoutPath } from '../context/paths.js';

/** How long a reader waits for a checkout to be still; past it the caller reads the state from the store instead. */
const FREEZE_BUSY_MS = 50;

/** A clean checkout held still for reading: its path holds exactly the branch head until release. */
export interface CleanCheckoutRead {
  path: string;
  /** Pages in the file (the head's commit). */
  commit: number;
  /** The connection holding the file still, inside its read transaction: reading through it opens no other. */
  db: Connection;
  /** A raw descriptor on the file, opened after that connection and closed after it: never close it. */
  fd: number;
  release(): void;
}

/**
 * The branch's writable checkout, frozen for reading, when it provably holds exactly the ref's head: its sidecar
 * names the head, its -wal is empty, and its size, backdated mtime and inode are the recorded ones while a read
 * transaction keeps any other connection from backfilling into it. Undefined otherwise (no checkout, written since,
 * busy, or the branch leased by a writer): the caller then materializes the head from the store. Reading it costs nothing proportional to its size,
 * where a materialization copies the file on a filesystem without reflink. `leasedByCaller`: the caller holds the
 * branch lease itself (a merge reading its target), so the lease names no other writer.
 */
export async function readCleanCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  leasedByCaller = false,
): Promise<CleanCheckoutRead | undefined> {
  // A leased branch has a writer (a live session's capture, an at-rest command): its checkout is left to it.
  if (!leasedByCaller && (await leaseLiveNow(ctx, ref))) return undefined;
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  const sc = readSidecar(path);
  if (!existsSync(path) || !sameIdentity(sc, headIdentity(ref)) || sc?.mtime_ns === undefined) return undefined;
  // Checked first without a connection, so a checkout someone wrote is left exactly as it is.
  if ((await checkClean(path, sc)) !== 'clean') return undefined;
  let frozen: FrozenCheckout;
  try {
    frozen = FrozenCheckout.open(path, FREEZE_BUSY_MS);
  } catch {
    return undefined;
  }
  const st = frozen.stat;
  if (Number(st.size) !== sc.size || st.mtimeNs.toString() !== sc.mtime_ns || st.ino.toString() !== sc.ino) {
    frozen.release();
    return undefined;
  }
  return {
    path,
    commit: sc.commit ?? Number(st.size) / (sc.page_size ?? 4096),
    db: frozen.connection,
    fd: frozen.fd,
    release: () => frozen.release(),
  };
}
