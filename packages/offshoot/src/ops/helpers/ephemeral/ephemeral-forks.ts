import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { refKey, parseRefKey } from '../../../core/keys.js';
import { newLineageId } from '../../../core/lineage.js';
import type { Target } from '../../../core/target.js';
import { fsyncDatabase } from '../../../sqlite/sync-database.js';
import { OverlayBackend } from '../../../store/overlay/overlay-backend.js';
import type { Store } from '../../../store/store.js';
import type { EphemeralHost } from '../context/ephemeral-host.js';
import { checkoutFiles, checkoutPath, ephemeralDir, volatileCacheDir } from '../context/paths.js';
import { parseTargetNote, targetNoteName } from '../context/target-note.js';

/**
 * A daemon's ephemeral forks: an overlay in front of the store's backend holds their refs and lineages (nothing of
 * theirs reaches the store until one is kept), and a note per checkout, never synced, lets the next daemon on the
 * checkout root remove the checkouts of those that died with this one. `pin` writes the daemon's liveness object
 * when the forks stand on a durable state it does not carry yet.
 */
export class EphemeralForks implements EphemeralHost {
  readonly overlay: OverlayBackend;

  constructor(
    store: Store,
    private readonly root: string,
    private readonly pin: () => Promise<void>,
    /** Puts a kept fork's checkout on the disk (a daemon's through the live session open on it, if any). */
    private readonly syncCheckout: (t: Target, path: string) => Promise<void> = (_t, path) => fsyncDatabase(path),
  ) {
    this.overlay = new OverlayBackend(store.backend, ephemeralDir(root, 'objects'), {
      refDropped: (key) => {
        const t = parseRefKey(key);
        if (t !== undefined) this.forget(t.db, t.branch);
      },
      lineagesDropped: (lineages) => this.dropCacheOf(lineages),
    });
  }

  holds(db: string, branch: string): boolean {
    return this.overlay.holdsRef(refKey(db, branch));
  }

  hold(db: string, branch: string): void {
    this.overlay.holdRef(refKey(db, branch));
  }

  holdsLineage(lineage: string): boolean {
    return this.overlay.holdsLineage(lineage);
  }

  newLineage(): string {
    const id = newLineageId();
    this.overlay.holdLineage(id);
    return id;
  }

  release(db: string, branch: string, lineages: readonly string[]): void {
    this.overlay.unholdRef(refKey(db, branch));
    for (const l of lineages) this.overlay.dropLineage(l);
  }

  async keep(t: Target): Promise<boolean> {
    if (!this.holds(t.db, t.branch)) return false;
    await this.overlay.keep(refKey(t.db, t.branch));
    // A durable branch's checkout is on the disk before anyone builds on it (docs/architecture.md, Local files).
    const path = checkoutPath(this.root, t.db, t.branch);
    if (existsSync(path)) await this.syncCheckout(t, path);
    this.forget(t.db, t.branch);
    // Its lineages are the store's now: ephemeral forks of it stand on them from here on.
    await this.pin();
    return true;
  }

  pinned(): Promise<void> {
    return this.pin();
  }

  checkingOut(db: string, branch: string): void {
    const dir = ephemeralDir(this.root, 'checkouts');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, targetNoteName({ db, branch })), '');
  }

  /** The ephemeral forks held, as targets. */
  held(): Target[] {
    const out: Target[] = [];
    for (const key of this.overlay.heldRefs()) {
      const t = parseRefKey(key);
      if (t !== undefined) out.push(t);
    }
    return out;
  }

  /**
   * Lets go of every fork still held, removing their checkouts and notes: what a daemon stopping cleanly does, so
   * nothing of them is left behind.
   */
  discardAll(): void {
    for (const t of this.held()) {
      for (const f of checkoutFiles(checkoutPath(this.root, t.db, t.branch))) rmSync(f, { force: true });
      this.forget(t.db, t.branch);
    }
    this.overlay.release();
    rmSync(ephemeralDir(this.root, 'cache'), { recursive: true, force: true });
  }

  // The volatile cache entries of chains that reached the lineages, under each database's cache folder.
  private dropCacheOf(lineages: readonly string[]): void {
    const cache = ephemeralDir(this.root, 'cache');
    let dbs: string[];
    try {
      dbs = readdirSync(cache);
    } catch {
      return;
    }
    for (const db of dbs)
      for (const l of lineages) rmSync(volatileCacheDir(this.root, db, l), { recursive: true, force: true });
  }

  private forget(db: string, branch: string): void {
    rmSync(join(ephemeralDir(this.root, 'checkouts'), targetNoteName({ db, branch })), { force: true });
  }

  /**
   * Removes what the ephemeral forks of a daemon that died on this checkout root left: the checkout of each note
   * whose branch the store does not have (one kept before the daemon died is the store's and stays), and the
   * overlay's scratch files. Only for a daemon holding the root's one-daemon lock. Returns how many checkouts went.
   */
  static async sweep(root: string, store: Store): Promise<number> {
    rmSync(ephemeralDir(root, 'objects'), { recursive: true, force: true });
    rmSync(ephemeralDir(root, 'cache'), { recursive: true, force: true });
    const dir = ephemeralDir(root, 'checkouts');
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names) {
      const t = parseTargetNote(name);
      if (t !== undefined) {
        let kept: boolean;
        try {
          kept = (await store.rawRef(t.db, t.branch)) !== undefined;
        } catch {
          // The store out of reach: the note waits for the next start.
          continue;
        }
        const path = checkoutPath(root, t.db, t.branch);
        if (!kept && existsSync(path)) removed++;
        if (!kept) for (const f of checkoutFiles(path)) rmSync(f, { force: true });
      }
      rmSync(join(dir, name), { force: true });
    }
    return removed;
  }
}
