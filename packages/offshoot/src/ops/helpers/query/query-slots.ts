import { fail } from '../../../core/errors.js';

/**
 * Bounds the queries of one process: at most `running` at once (each is a child process), up to `waiting` more
 * queued for a slot, each for at most its own time limit; anything beyond is refused BUSY at once, retryable.
 */
export class QuerySlots {
  #running = 0;
  readonly #queue: Array<() => void> = [];

  constructor(
    readonly running: number,
    readonly waiting: number,
  ) {}

  /** Runs fn in a slot, waiting up to waitMs for one. */
  async run<T>(waitMs: number, fn: () => Promise<T>): Promise<T> {
    await this.#acquire(waitMs);
    try {
      return await fn();
    } finally {
      this.#release();
    }
  }

  #acquire(waitMs: number): Promise<void> {
    if (this.#running < this.running) {
      this.#running++;
      return Promise.resolve();
    }
    if (this.#queue.length >= this.waiting) return Promise.reject(this.#busy('and as many are waiting'));
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.#queue.indexOf(grant);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(this.#busy(`and none finished within ${waitMs} ms`));
      }, waitMs);
      this.#queue.push(grant);
    });
  }

  // A finished query hands its slot straight to the first in line.
  #release(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#running--;
    else next();
  }

  #busy(why: string): Error {
    return fail('BUSY', `${this.running} queries are already running ${why}`, {
      retryable: true,
      hint: 'retry once a query has answered, or run fewer queries at a time',
    });
  }
}
