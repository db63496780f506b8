/** Runs at most `width` jobs at once; the others wait their turn in arrival order. */
export class ConcurrencyGate {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly width: number) {}

  /** Runs fn once fewer than `width` jobs are running. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running >= this.width) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running++;
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next in line, or is freed.
      const next = this.#waiting.shift();
      if (next === undefined) this.#running--;
      else next();
    }
  }
}
