/** Runs async jobs one at a time in arrival order; a failed job does not stop the ones behind it. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Queues fn behind every earlier job and returns its result. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Resolves once every job queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
