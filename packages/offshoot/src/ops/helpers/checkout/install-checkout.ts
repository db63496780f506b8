import { utimesSync } from 'node:fs';
import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { fsyncPath, tempPathFor } from '../../../platform/atomic-file.js';
import { bootId } from '../../../platform/boot-id.js';
import {
  backdatedSeconds,
  type CheckoutIdentity,
  type Fingerprint,
  fingerprintOf,
  type Sidecar,
  writeSidecar,
} from '../../../sqlite/checkout-sidecar.js';
import { type CloneMethod, cloneOrCopy } from '../../../sqlite/clone-file.js';
import { dropKept } from '../../../sqlite/kept-connection.js';
import { type PageSums, pageSumsPath, writePageSums } from '../../../sqlite/page-sums.js';
import { fsyncDatabase } from '../../../sqlite/sync-database.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import { headIdentity } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { explainDamage } from '../context/damaged-object.js';
import { checkoutPath } from '../context/paths.js';
import { cachedChain } from '../chain/materialize.js';
import { removeUnsyncedNote, UnsyncedCheckout, writeUnsyncedNote } from './unsynced-checkout.js';

/** A ref's head materialized privately beside its checkout path, not yet in place (see stageCheckout). */
export interface StagedCheckout {
  /** The checkout path it is for. */
  readonly path: string;
  /** The head it holds. */
  readonly identity: CheckoutIdentity;
  /** The private file, renamed into place by placeCheckout. */
  readonly tmp: string;
  readonly sidecar: Sidecar;
  readonly sums: PageSums;
  /** The cache entry's `.pages`, exactly these sums encoded: placed by a copy (a clone where it can), not re-encoded. */
  readonly sumsFile?: string;
  /** Set once placeCheckout renamed it into place: its sidecars are then the ones at the path. */
  placed: boolean;
  /** The checkout root and branch it is for. */
  readonly root: string;
  readonly target: Target;
  /** For a copy not synced (deferSync): the boot it was made in and its fingerprint as staged, which its note records. */
  readonly unsyncedFrom?: { boot: string; fingerprint: Fingerprint };
  /** Set by placeCheckout for a copy not synced: the hold that settles it (see UnsyncedCheckout). */
  unsynced?: UnsyncedCheckout;
}

/** How a checkout is staged. */
export interface StageOptions {
  /**
   * The caller holds the checkout until its copy is on the disk (a session's process): a copy is placed without
   * waiting for the disk, under a durable note, and its -wal pinned until placeCheckout's hold settles it.
   */
  deferSync?: boolean;
}

/**
 * Materializes a ref's head into a private file beside the branch's checkout path (a reflink clone of the chain's
 * cache entry where the filesystem can, else a copy), stamped with a backdated mtime, and touches nothing at the path
 * itself: a session stages its checkout while its lease is still being written, and only places it once the lease
 * is durable. Remove it with discardStaged when it is not placed.
 */
export async function stageCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  label = `checkout ${db}@${branch}`,
  opts: StageOptions = {},
): Promise<StagedCheckout> {
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  // An ephemeral fork's checkout is noted for the next daemon to remove, and never waited onto the disk (gone with
  // the daemon, it is never recovered); it is fsynced when the fork is kept.
  const ephemeral = ctx.ephemeral?.holds(db, branch) === true;
  if (ephemeral) ctx.ephemeral?.checkingOut(db, branch);
  await mkdir(dirname(path), { recursive: true });
  // By key alone: a cached entry is found by its members' keys, and a build states the sizes it reports.
  const chain = await new ChainResolver(ctx.store, { sizes: false }).resolve(ref.lineage, ref.head_txid);
  const tmp = tempPathFor(path);
  try {
    for (let attempt = 0; ; attempt++) {
      const entry = await explainDamage(ctx, { db, branch }, () => cachedChain(ctx, db, chain, label));
      let method: CloneMethod;
      try {
        method = await cloneOrCopy(entry.path, tmp, true);
      } catch (err) {
        // The ro-cache janitor may evict an entry between lookup and clone; rebuilding it is always correct.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2) throw err;
        continue;
      }
      await chmod(tmp, 0o644);
      const past = backdatedSeconds(ctx.now().getTime());
      utimesSync(tmp, past, past);
      // SQLite makes a commit durable in the -wal or journal alone and trusts the main file already is: a copy must
      // be on the disk before anyone writes on top of it (a reflink clone's blocks are the source's, which the
      // filesystem writes before it shares them). On ext4 the first fsync after the copy wrote it anyway.
      // A caller that holds the checkout may place it first and sync it behind a note (see UnsyncedCheckout).
      const boot = method === 'copy' && !ephemeral && opts.deferSync === true ? bootId() : undefined;
      if (method === 'copy' && !ephemeral && boot === undefined) await fsyncPath(tmp);
      const m = entry.result;
      const identity = headIdentity(ref);
      const fingerprint = fingerprintOf(tmp);
      const sidecar: Sidecar = {
        ...identity,
        ltx_checksum: m.checksum.toString(16),
        page_size: m.pageSize,
        commit: m.commit,
        ...fingerprint,
      };
      return {
        path,
        identity,
        tmp,
        sidecar,
        sums: m.sums,
        ...(entry.sumsFile !== undefined ? { sumsFile: entry.sumsFile } : {}),
        placed: false,
        root: ctx.checkoutRoot,
        target: { db, branch },
        ...(boot !== undefined ? { unsyncedFrom: { boot, fingerprint } } : {}),
      };
    }
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Puts a staged checkout in place: its sidecars first, naming the private file's inode and mtime (until the rename
 * they describe a file that is not at the path, so they can never vouch for the wrong content), then the rename.
 * The caller has quiesced any existing checkout, so the old -wal/-shm (empty) are removed rather than replayed onto
 * the new file. On failure the private file is removed.
 */
export async function placeCheckout(staged: StagedCheckout): Promise<string> {
  const { path, tmp } = staged;
  // A connection this process kept on the file being replaced goes first: it would read the old file.
  dropKept(path);
  try {
    // All before the rename, in any order: the sidecars are not fsynced and each is replaced atomically, so a crash
    // leaves sums that disagree with the checksum the `.sum` records (every reader checks that) or a `.sum` naming a
    // file not at the path.
    await Promise.all([
      noteUnsynced(staged),
      placePageSums(staged),
      writeSidecar(path, staged.sidecar),
      rm(`${path}-wal`, { force: true }),
      rm(`${path}-shm`, { force: true }),
    ]);
    // No directory fsync: if a crash loses the rename, the old file is back at the path under sidecars that name the
    // new inode, which reads as modified, never as clean.
    await rename(tmp, path);
    staged.placed = true;
    if (staged.unsyncedFrom !== undefined) {
      const held = await holdUnsynced(staged);
      if (held !== undefined) staged.unsynced = held;
    }
    return path;
  } catch (err) {
    await rm(tmp, { force: true });
    if (!staged.placed && staged.unsyncedFrom !== undefined) await removeUnsyncedNote(staged.root, staged.target);
    throw err;
  }
}

/** Writes the note of a copy placed unsynced (durably, before the rename: nothing may write it until then). */
async function noteUnsynced(staged: StagedCheckout): Promise<void> {
  const from = staged.unsyncedFrom;
  if (from === undefined) return;
  await writeUnsyncedNote(staged.root, {
    ...staged.target,
    boot_id: from.boot,
    identity: staged.identity,
    fingerprint: from.fingerprint,
  });
}

/** Pins a copy placed unsynced; one that cannot be pinned is synced now instead, and its note removed. */
async function holdUnsynced(staged: StagedCheckout): Promise<UnsyncedCheckout | undefined> {
  try {
    return UnsyncedCheckout.hold(staged.root, staged.target, staged.path);
  } catch {
    await fsyncDatabase(staged.path);
    await removeUnsyncedNote(staged.root, staged.target);
    return undefined;
  }
}

/**
 * Puts the staged page sums beside the checkout path: a copy of the cache entry's `.pages` when the sums were read
 * from it (a reflink clone where the filesystem can: at 1.28 GiB they are ~5 MiB to encode and write), else encoded.
 * Atomic like writePageSums, and like it not fsynced.
 */
async function placePageSums(staged: StagedCheckout): Promise<void> {
  if (staged.sumsFile !== undefined) {
    const dest = pageSumsPath(staged.path);
    const tmp = tempPathFor(dest);
    try {
      await cloneOrCopy(staged.sumsFile, tmp, true);
      await chmod(tmp, 0o644);
      const placed = await stat(tmp, { bigint: true });
      await rename(tmp, dest);
      // The same bytes as the sums in hand: a session seeded from them patches this file instead of rewriting it.
      staged.sums.file = { ino: placed.ino, size: placed.size, mtimeNs: placed.mtimeNs };
      return;
    } catch (err) {
      await rm(tmp, { force: true });
      // The ro-cache janitor may have evicted the entry since it was staged; the sums in hand are the same bytes.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  await writePageSums(staged.path, staged.sums);
}

/** Removes a staged checkout that was not placed (a no-op once it was). */
export async function discardStaged(staged: StagedCheckout | undefined): Promise<void> {
  if (staged !== undefined && !staged.placed) await rm(staged.tmp, { force: true });
}

/** Materializes a ref's head at the branch's checkout path: staged privately, then placed (see placeCheckout). */
export async function installCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  label = `checkout ${db}@${branch}`,
): Promise<string> {
  return placeCheckout(await stageCheckout(ctx, db, branch, ref, label));
}
