import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { LiveSlot } from './session-table.js';

/** What the watch does when an evicted session's checkout shows activity. */
export interface EvictedWatchHooks {
  /** The checkout of an evicted session was written to (or may have been): check it, reconnect it if it changed. */
  changed(slot: LiveSlot): void;
  log(line: string): void;
}

// The checkout's own files: the database, its -wal and a rollback journal (the -shm changes through mmap, unseen;
// the sidecars are ours).
function checkoutOf(file: string): string | undefined {
  const m = /^(.*\.db)(-wal|-journal)?$/.exec(file);
  return m?.[1];
}

/**
 * Watches the checkouts of evicted sessions for writes, so that the next write reconnects its session at once and
 * a checkout taken out of WAL mode is noticed while it happens. One watch per checkout directory (an inotify watch
 * on Linux, no file descriptor of its own), held only while that directory has an evicted session: an idle evicted
 * session costs no polling. The background flusher checks evicted checkouts too, so a missed event costs at most
 * one flush interval.
 */
export class EvictedWatch {
  readonly #dirs = new Map<string, { watcher: FSWatcher; slots: Map<string, LiveSlot> }>();

  constructor(private readonly hooks: EvictedWatchHooks) {}

  /** Starts watching the slot's checkout. */
  add(slot: LiveSlot): void {
    const path = slot.session.path;
    const dir = dirname(path);
    let entry = this.#dirs.get(dir);
    if (entry === undefined) {
      let watcher: FSWatcher;
      try {
        watcher = watch(dir, { persistent: false }, (_event, file) => this.#onEvent(dir, file));
      } catch (err) {
        this.hooks.log(`offshoot: cannot watch ${dir} (the flusher still checks it): ${(err as Error).message}`);
        return;
      }
      watcher.on('error', (err) => {
        this.hooks.log(`offshoot: stopped watching ${dir} (the flusher still checks it): ${err.message}`);
        this.#drop(dir);
      });
      entry = { watcher, slots: new Map() };
      this.#dirs.set(dir, entry);
    }
    entry.slots.set(basename(path), slot);
  }

  /** Stops watching the slot's checkout (it reconnected or closed). */
  remove(slot: LiveSlot): void {
    const path = slot.session.path;
    const dir = dirname(path);
    const entry = this.#dirs.get(dir);
    if (entry === undefined || entry.slots.get(basename(path)) !== slot) return;
    entry.slots.delete(basename(path));
    if (entry.slots.size === 0) this.#drop(dir);
  }

  /** Stops every watch. */
  close(): void {
    for (const dir of [...this.#dirs.keys()]) this.#drop(dir);
  }

  #drop(dir: string): void {
    const entry = this.#dirs.get(dir);
    if (entry === undefined) return;
    this.#dirs.delete(dir);
    entry.watcher.close();
  }

  #onEvent(dir: string, file: string | null): void {
    const entry = this.#dirs.get(dir);
    if (entry === undefined) return;
    // No name: the kernel could not say which file (an overflow); every evicted checkout there gets a look.
    const name = file === null ? undefined : checkoutOf(file);
    if (file !== null && name === undefined) return;
    for (const [base, slot] of entry.slots) if (name === undefined || base === name) this.hooks.changed(slot);
  }
}
