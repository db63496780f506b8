import type { LiveSlot } from './session-table.js';

/** What the budget needs of the daemon: its sessions, and a way to evict one on its own queue. */
export interface BudgetHost {
  /** Every live session slot. */
  live(): LiveSlot[];
  /** Evicts the slot's session on the slot's queue; false when it could not be evicted now. */
  evict(slot: LiveSlot): Promise<boolean>;
  /** Closes the least recently kept connections that no longer fit beside the places held (see spare). */
  trimKept(): void;
}

/**
 * The daemon's budget of checkouts with descriptors open (`serve -max-open`): a session holds a place while its
 * capture runs, an open or a reconnection takes one, and when none is free the coldest idle session (least recently
 * active, nothing queued on it) is evicted to make room. Evicted sessions keep their lease and lose nothing; they
 * reconnect on their next write or request. When every session holding a place is busy, the caller waits for one
 * to finish. The places no session holds are for the connections the daemon keeps on closed checkouts: a session
 * taking a place closes the least recently kept first, and a closing session's place goes to its kept connection.
 */
export class CheckoutBudget {
  #held = 0;
  #closing = 0;
  readonly #evicting = new Set<LiveSlot>();
  #waiters: Array<() => void> = [];

  constructor(
    readonly maxOpen: number,
    private readonly host: BudgetHost,
  ) {}

  /** Places held: sessions capturing, and opens or reconnections in flight. */
  get held(): number {
    return this.#held;
  }

  /**
   * Places no session holds, counting those of sessions closing (each hands its connection over to be kept), within
   * what the file limit affords: room for connections kept on closed checkouts.
   */
  spare(affordable: number): number {
    return Math.min(this.maxOpen, affordable) - this.#held + this.#closing;
  }

  /** Runs a placed session's close: meanwhile its place counts as spare, for the connection it hands over. */
  async closing<T>(close: () => Promise<T>): Promise<T> {
    this.#closing++;
    try {
      return await close();
    } finally {
      this.#closing--;
    }
  }

  /** Takes a place for a session about to start capturing, evicting the coldest idle session when none is free. */
  async take(): Promise<void> {
    // Sessions that could not be evicted this time (a flush failed): not tried again until something changes.
    const refused = new Set<LiveSlot>();
    for (;;) {
      if (this.#held < this.maxOpen) {
        this.#held++;
        this.host.trimKept();
        return;
      }
      const victim = this.#coldest(refused);
      if (victim === undefined) {
        await new Promise<void>((resolve) => this.#waiters.push(resolve));
        refused.clear();
        continue;
      }
      this.#evicting.add(victim);
      try {
        // A successful eviction gives the victim's place back (give()), which the loop then takes.
        if (!(await this.host.evict(victim))) refused.add(victim);
      } finally {
        this.#evicting.delete(victim);
      }
    }
  }

  /** Gives a place back: a session evicted or closed, or an open that failed. */
  give(): void {
    this.#held = Math.max(0, this.#held - 1);
    this.wake();
  }

  /** Lets waiting callers look again (a session finished some work and may be idle now). */
  wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  // The least recently active session that holds a place and has nothing running or queued.
  #coldest(refused: ReadonlySet<LiveSlot>): LiveSlot | undefined {
    let best: LiveSlot | undefined;
    for (const slot of this.host.live()) {
      if (slot.state !== 'open' || slot.session.evicted || slot.queue.busy) continue;
      if (this.#evicting.has(slot) || refused.has(slot)) continue;
      if (best === undefined || slot.session.lastActivity < best.session.lastActivity) best = slot;
    }
    return best;
  }
}
