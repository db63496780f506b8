import type { EventEnvelope, EventType } from '../protocol/wire.js';

/** How many undelivered events a subscriber may hold before it is dropped as a slow consumer. */
export const SUBSCRIBER_BUFFER = 64;

/** A live subscription: an async stream of envelopes that ends when closed or when dropped as too slow. */
export interface Subscription extends AsyncIterableIterator<EventEnvelope> {
  /** Leaves the bus; a pending or later `next()` resolves done. */
  close(): void;
}

/** Builds one envelope; both transports (socket and SSE) serialize it with JSON.stringify unchanged. */
export function makeEnvelope(
  type: EventType,
  db?: string,
  branch?: string,
  detail?: Record<string, unknown>,
): EventEnvelope {
  const env: EventEnvelope = { v: 1, ts: new Date().toISOString(), type };
  if (db !== undefined && db !== '') env.db = db;
  if (branch !== undefined && branch !== '') env.branch = branch;
  if (detail !== undefined && Object.keys(detail).length > 0) env.detail = detail;
  return env;
}

class Subscriber implements Subscription {
  readonly #buffer: EventEnvelope[] = [];
  #waiting: ((r: IteratorResult<EventEnvelope>) => void) | undefined;
  #ended = false;
  readonly #leave: (s: Subscriber) => void;

  constructor(leave: (s: Subscriber) => void) {
    this.#leave = leave;
  }

  /** Hands one event over without ever waiting; false means this subscriber was just dropped. */
  offer(env: EventEnvelope): boolean {
    if (this.#ended) return false;
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting({ value: env, done: false });
      return true;
    }
    if (this.#buffer.length < SUBSCRIBER_BUFFER) {
      this.#buffer.push(env);
      return true;
    }
    // The terminal notice goes past the cap on purpose: the reader must learn why its stream ended.
    this.#buffer.push(makeEnvelope('dropped_slow_consumer'));
    this.#ended = true;
    return false;
  }

  next(): Promise<IteratorResult<EventEnvelope>> {
    const env = this.#buffer.shift();
    if (env !== undefined) return Promise.resolve({ value: env, done: false });
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<EventEnvelope>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  close(): void {
    this.#buffer.length = 0;
    this.#ended = true;
    this.#leave(this);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** In-process fan-out of daemon events: no replay, a bounded buffer per subscriber, and a publish that never blocks. */
export class EventBus {
  readonly #subscribers = new Set<Subscriber>();

  /** Delivers an event to every current subscriber; a subscriber whose buffer is full is dropped instead. */
  publish(type: EventType, db?: string, branch?: string, detail?: Record<string, unknown>): void {
    if (this.#subscribers.size === 0) return;
    const env = makeEnvelope(type, db, branch, detail);
    for (const s of this.#subscribers) {
      if (!s.offer(env)) this.#subscribers.delete(s);
    }
  }

  /** Starts a subscription that sees only events published from now on. */
  subscribe(): Subscription {
    const s = new Subscriber((gone) => this.#subscribers.delete(gone));
    this.#subscribers.add(s);
    return s;
  }

  /** How many subscribers are attached right now. */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }
}
