import { parseRefKey } from '../../../core/keys.js';
import type { OpsContext } from './context.js';
import { refVersions } from './refs-version.js';

/** How often the store's refs are checked while someone is listening. */
export const REF_WATCH_MS = 2_000;

/** One branch whose ref changed between two checks; `gone` when it no longer exists. */
export interface RefChange {
  db: string;
  branch: string;
  gone: boolean;
  /** True when the branch did not exist at the previous check. */
  added: boolean;
}

/**
 * Notices ref changes nobody announces — an at-rest `offshoot fork` or `checkpoint`, another host — by comparing
 * every ref's version every couple of seconds, only while at least one listener is subscribed. One watcher serves
 * every listener (the dashboard's pages, an MCP server's subscriptions); `poke` checks at once, for a caller that
 * knows something just changed.
 */
export class RefWatch {
  readonly #listeners = new Set<(changes: RefChange[]) => void>();
  #timer: NodeJS.Timeout | undefined;
  #last: Map<string, string> | undefined;
  #checking: Promise<void> | undefined;
  #again = false;

  constructor(
    private readonly ctx: OpsContext,
    private readonly everyMs = REF_WATCH_MS,
  ) {}

  /** Calls onChange with the changed branches after each detected change until the returned function is called. */
  subscribe(onChange: (changes: RefChange[]) => void): () => void {
    this.#listeners.add(onChange);
    if (this.#timer === undefined) {
      void this.poke();
      this.#timer = setInterval(() => void this.poke(), this.everyMs);
      this.#timer.unref();
    }
    return () => {
      this.#listeners.delete(onChange);
      if (this.#listeners.size === 0) this.stop();
    };
  }

  /** Stops watching (the next subscriber starts again). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#last = undefined;
  }

  /** Checks now (after a check already running, once more), resolving when the listeners have been told. */
  poke(): Promise<void> {
    if (this.#checking) {
      this.#again = true;
      return this.#checking;
    }
    this.#checking = this.#check().finally(() => {
      this.#checking = undefined;
      if (this.#again) {
        this.#again = false;
        void this.poke();
      }
    });
    return this.#checking;
  }

  async #check(): Promise<void> {
    if (this.#listeners.size === 0) return;
    let now: Map<string, string>;
    try {
      now = await refVersions(this.ctx);
    } catch {
      // A failed listing (a store hiccup) is retried on the next tick; listeners keep what they have.
      return;
    }
    const before = this.#last;
    this.#last = now;
    if (before === undefined) return;
    const changes: RefChange[] = [];
    for (const [key, v] of now) {
      if (before.get(key) === v) continue;
      const t = parseRefKey(key);
      if (t) changes.push({ ...t, gone: false, added: !before.has(key) });
    }
    for (const key of before.keys()) {
      const t = now.has(key) ? undefined : parseRefKey(key);
      if (t) changes.push({ ...t, gone: true, added: false });
    }
    if (changes.length > 0) for (const l of this.#listeners) l(changes);
  }
}
