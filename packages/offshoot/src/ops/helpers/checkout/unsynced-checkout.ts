import { readdirSync, readFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Target } from '../../../core/target.js';
import { fsyncPath, writeFileAtomic } from '../../../platform/atomic-file.js';
import { pinBackfill } from '../../../sqlite/backfill-pin.js';
import type { CheckoutIdentity, Fingerprint } from '../../../sqlite/checkout-sidecar.js';
import { fsyncDatabase } from '../../../sqlite/sync-database.js';
import { scratchDir } from '../context/paths.js';
import { parseTargetNote, targetNoteName } from '../context/target-note.js';

/**
 * The durable note of a checkout whose main file was placed without waiting for the disk: which head it was copied
 * from, the fingerprint it was placed with, and the boot it was placed in. Its recovery (recover-unsynced) rebuilds
 * the main file from the store when a new boot may have lost the copy.
 */
export interface UnsyncedNote extends Target {
  boot_id: string;
  identity: CheckoutIdentity;
  fingerprint: Fingerprint;
}

/** Where the notes of a checkout root's unsynced checkouts are: .scratch/unsynced/, one file a branch. */
function notesDir(root: string): string {
  return scratchDir(root, 'unsynced');
}

/** Writes a branch's note durably (the file and its directory fsynced): nothing may write the checkout before. */
export async function writeUnsyncedNote(root: string, note: UnsyncedNote): Promise<void> {
  await writeFileAtomic(join(notesDir(root), targetNoteName(note)), `${JSON.stringify(note)}\n`);
}

/** The branch's note, or undefined when it has none (or an unreadable one, which no durable write left). */
export function readUnsyncedNote(root: string, t: Target): UnsyncedNote | undefined {
  try {
    const note = JSON.parse(readFileSync(join(notesDir(root), targetNoteName(t)), 'utf8')) as UnsyncedNote;
    return note.boot_id !== undefined && note.identity !== undefined
      ? { ...note, db: t.db, branch: t.branch }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Every note under a checkout root: the checkouts a recovery looks at. */
export function listUnsyncedNotes(root: string): UnsyncedNote[] {
  let names: string[];
  try {
    names = readdirSync(notesDir(root));
  } catch {
    return [];
  }
  const notes: UnsyncedNote[] = [];
  for (const name of names) {
    const t = parseTargetNote(name);
    const note = t !== undefined ? readUnsyncedNote(root, t) : undefined;
    if (note !== undefined) notes.push(note);
  }
  return notes;
}

/** Removes a branch's note durably (its directory fsynced when there was one). */
export async function removeUnsyncedNote(root: string, t: Target): Promise<void> {
  try {
    await unlink(join(notesDir(root), targetNoteName(t)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  await fsyncPath(notesDir(root));
}

/**
 * A checkout placed unsynced and held by this process: its -wal pinned at mark 0 (pinBackfill) from the placement
 * until its main file is on the disk, so that until then the -wal holds every write since the copy, which is what a
 * rebuild from the store replays. `settle` puts the main file on the disk, removes the note and lets the -wal go.
 */
export class UnsyncedCheckout {
  #settled: Promise<void> | undefined;

  private constructor(
    private readonly root: string,
    private readonly target: Target,
    private readonly path: string,
    private readonly release: () => void,
  ) {}

  /** Pins the checkout just placed at path (its -wal holds no frames yet): call it before anyone can write there. */
  static hold(root: string, t: Target, path: string): UnsyncedCheckout {
    return new UnsyncedCheckout(root, t, path, pinBackfill(path));
  }

  /**
   * Puts the main file on the disk, then removes the note, then lets the -wal go: once, however often called. A
   * failure keeps the note (the next daemon or checkout syncs it again) and lets the -wal go all the same.
   */
  settle(): Promise<void> {
    this.#settled ??= (async () => {
      try {
        await fsyncDatabase(this.path);
        await removeUnsyncedNote(this.root, this.target);
      } finally {
        this.release();
      }
    })();
    return this.#settled;
  }
}
