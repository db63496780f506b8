import type { DaemonContext } from './daemon-context.js';
import { flushLive } from './session-lifecycle.js';
import { Ticker } from './ticker.js';

/**
 * Flushes every open session with something to write each -flush-every. An idle tick writes nothing; a failure is
 * recorded on the session (flush_error, a flush_failed event) and retried on the next tick; a session with a
 * terminal error (fenced) is left alone until it is closed.
 */
export class BackgroundFlusher {
  private readonly ticker: Ticker;

  constructor(private readonly d: DaemonContext) {
    this.ticker = new Ticker(d.options.flushEveryMs, () => this.tick());
  }

  /** Starts the cadence (a -flush-every of 0 never flushes in the background). */
  start(): void {
    this.ticker.start();
  }

  /** Stops the cadence, waiting for a tick in progress. */
  stop(): Promise<void> {
    return this.ticker.stop();
  }

  private async tick(): Promise<void> {
    const due = this.d.sessions
      .live()
      .filter(
        (s) =>
          s.state === 'open' && !s.session.error && (s.session.dirty || s.session.info().flush_error !== undefined),
      );
    // Failures are already on the session and in its events; nothing else to do with them here.
    await Promise.allSettled(due.map((s) => flushLive(s, { kind: 'auto' })));
  }
}
