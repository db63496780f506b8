import { refsVersion } from '../ops/helpers/context/refs-version.js';
import type { OpsContext } from '../ops/helpers/context/context.js';

/** How often the store's refs are checked while some page is listening. */
export const REF_WATCH_MS = 2_000;

/**
 * Notices ref changes nobody announces — an at-rest `offshoot fork` or `checkpoint`, another host — by comparing
 * refsVersion every couple of seconds, only while at least one page is subscribed. One watcher serves every page.
 */
export class RefWatch {
  readonly #listeners = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;
  #last: string | undefined;
  #checking = false;

  constructor(
    private readonly ctx: OpsContext,
    private readonly everyMs = REF_WATCH_MS,
  ) {}

  /** Calls onChange after each detected change until the returned function is called. */
  subscribe(onChange: () => void): () => void {
    this.#listeners.add(onChange);
    if (this.#timer === undefined) {
      void this.#check();
      this.#timer = setInterval(() => void this.#check(), this.everyMs);
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

  async #check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const v = await refsVersion(this.ctx);
      const changed = this.#last !== undefined && v !== this.#last;
      this.#last = v;
      if (changed) for (const l of this.#listeners) l();
    } catch {
      // A failed listing (a store hiccup) is retried on the next tick; the page keeps what it shows.
    } finally {
      this.#checking = false;
    }
  }
}
