/** Runs async jobs one at a time in arrival order; a failed job does not stop the ones behind it. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private jobs = 0;

  /** Queues fn behind every earlier job and returns its result. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    this.jobs++;
    const next = this.tail.then(fn).finally(() => {
      this.jobs--;
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** True while a job runs or waits. */
  get busy(): boolean {
    return this.jobs > 0;
  }

  /** Resolves once every job queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
