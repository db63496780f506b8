/**
 * Calls fn every intervalMs, never overlapping itself: the next call is scheduled only after the previous one
 * settled. A failure of fn goes to onError and the ticking goes on; stop() waits for a call in progress.
 */
export class Ticker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly fn: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Starts ticking; an interval of 0 means never. */
  start(): void {
    if (this.intervalMs > 0 && !this.stopped) this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A rejection left unhandled here would end the daemon, and every session with it.
      this.running = Promise.resolve()
        .then(this.fn)
        .catch(this.onError)
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs);
  }

  /** Stops ticking and waits for a call in progress to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
