import { fail } from '../core/errors.js';
import { formatTarget, type Target } from '../core/target.js';
import type { Session } from '../session/session.js';
import { SerialQueue } from './serial-queue.js';

/** A session slot that is live: open, or being closed. Every flush and the close run on its queue. */
export interface LiveSlot {
  state: 'open' | 'closing';
  target: Target;
  session: Session;
  queue: SerialQueue;
}

/** A slot reserved by an open still in flight. */
export interface PendingSlot {
  state: 'pending';
  target: Target;
}

/** One branch's entry in the session table. */
export type Slot = LiveSlot | PendingSlot;

function key(t: Target): string {
  return `${t.db}@${t.branch}`;
}

function notOpen(t: Target): Error {
  const name = formatTarget(t);
  return fail('NOT_FOUND', `no session open on ${name}`, { hint: `open one with 'offshoot session open ${name}'` });
}

/**
 * The daemon's sessions by branch. An open first reserves a pending slot, so two opens of one branch cannot race
 * and at-rest ops refuse the branch while its open is in flight.
 */
export class SessionTable {
  private readonly slots = new Map<string, Slot>();
  private readonly waiters: Array<() => void> = [];
  private shuttingDown = false;

  constructor(private readonly onChange: (open: number) => void = () => undefined) {}

  /** Reserves a pending slot for an open; refused when the branch has a slot already or the daemon is stopping. */
  reserve(t: Target): void {
    if (this.shuttingDown)
      throw fail('UNAVAILABLE', 'daemon is shutting down', {
        retryable: true,
        hint: 'start a new daemon and open the session there',
      });
    const slot = this.slots.get(key(t));
    if (slot !== undefined) {
      const name = formatTarget(t);
      throw fail(
        'SESSION_OPEN',
        slot.state === 'pending' ? `session ${name} is already being opened` : `session ${name} is already open`,
        {
          hint: `use the open session, or close it first with 'offshoot session close ${name}'`,
        },
      );
    }
    this.slots.set(key(t), { state: 'pending', target: t });
  }

  /** Turns a reservation into an open session. */
  fill(t: Target, session: Session): LiveSlot {
    const slot: LiveSlot = { state: 'open', target: t, session, queue: new SerialQueue() };
    this.slots.set(key(t), slot);
    this.changed();
    return slot;
  }

  /** Forgets a branch's slot (a failed open, or a finished close). */
  remove(t: Target): void {
    this.slots.delete(key(t));
    this.changed();
  }

  /** The branch's slot, if any. */
  get(t: Target): Slot | undefined {
    return this.slots.get(key(t));
  }

  /** The branch's open session, or NOT_FOUND / BUSY naming why there is none. */
  open(t: Target): LiveSlot {
    const slot = this.slots.get(key(t));
    if (slot === undefined) throw notOpen(t);
    if (slot.state !== 'open') {
      throw fail(
        'BUSY',
        `session ${formatTarget(t)} is ${slot.state === 'pending' ? 'still being opened' : 'closing'}`,
        { retryable: true, hint: 'retry in a moment' },
      );
    }
    return slot;
  }

  /** Marks the branch's open session as closing (so nothing else starts on it) and returns it. */
  beginClose(t: Target): LiveSlot {
    const slot = this.open(t);
    slot.state = 'closing';
    return slot;
  }

  /**
   * Refuses an op that would repoint, replace or delete a branch this daemon has a session on (or is opening one
   * on): the session owns the checkout and the lease, so the caller must close it first.
   */
  refuseIfPresent(t: Target, what: string): void {
    const slot = this.slots.get(key(t));
    if (slot === undefined) return;
    const name = formatTarget(t);
    const why = slot.state === 'pending' ? 'a session is being opened on it' : 'it has a session open in this daemon';
    throw fail('SESSION_OPEN', `${what} ${name}: ${why}; close the session first`, {
      hint: `run 'offshoot session close ${name}', then retry`,
    });
  }

  /** Live sessions (open or closing), ordered by branch. */
  live(): LiveSlot[] {
    return [...this.slots.values()]
      .filter((s): s is LiveSlot => s.state !== 'pending')
      .sort((a, b) => key(a.target).localeCompare(key(b.target)));
  }

  /** Refuses every later open; opens already reserved still complete. */
  stopOpening(): void {
    this.shuttingDown = true;
  }

  /** Resolves once no open is in flight. */
  whenNoPending(): Promise<void> {
    if (![...this.slots.values()].some((s) => s.state === 'pending')) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private changed(): void {
    this.onChange(this.live().length);
    if ([...this.slots.values()].some((s) => s.state === 'pending')) return;
    for (const w of this.waiters.splice(0)) w();
  }
}
