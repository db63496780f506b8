/** An overall deadline for one S3 call (retries and body transfer included), delivered as an abort signal. */
export class CallDeadline {
  private readonly controller = new AbortController();
  private readonly started = Date.now();
  private timer: NodeJS.Timeout;
  private fired = false;

  constructor(ms: number) {
    this.timer = this.arm(ms);
  }

  /** Aborts the request (and any body stream it returned) when the deadline passes. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once the deadline has passed and the call was aborted for it. */
  get expired(): boolean {
    return this.fired;
  }

  /** Moves the deadline to ms after the call started, e.g. once a response says how many bytes will follow. */
  resetFromStart(ms: number): void {
    if (this.fired) return;
    clearTimeout(this.timer);
    this.timer = this.arm(Math.max(0, ms - (Date.now() - this.started)));
  }

  /** Cancels the deadline once the call is over. */
  clear(): void {
    clearTimeout(this.timer);
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort();
    }, ms);
    // An open request keeps the process alive by itself; an abandoned deadline must not.
    return timer.unref();
  }
}
