import type { DaemonContext } from './daemon-context.js';
import { flushLive } from './session-lifecycle.js';
import { Ticker } from './ticker.js';

/**
 * Flushes every open session with something to write each -flush-every (an evicted one whose checkout changed
 * reconnects first). An idle tick writes nothing; a failure is
 * recorded on the session (flush_error, a flush_failed event) and retried on the next tick; a session with a
 * terminal error (fenced) is left alone until it is closed.
 */
export class BackgroundFlusher {
  private readonly ticker: Ticker;

  constructor(private readonly d: DaemonContext) {
    this.ticker = new Ticker(
      d.options.flushEveryMs,
      () => this.tick(),
      (err) => d.options.log(`offshoot: flusher: ${(err as Error).message}`),
    );
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
    // An evicted session whose checkout changed is flushed too (it reconnects first): a write its watcher missed
    // is captured here at the latest.
    const due = this.d.sessions
      .live()
      .filter(
        (s) =>
          s.state === 'open' &&
          !s.session.error &&
          (s.session.dirty || s.session.info().flush_error !== undefined || s.session.needsReconnect),
      );
    // Failures are already on the session and in its events; nothing else to do with them here.
    await Promise.allSettled(due.map((s) => flushLive(this.d, s, { kind: 'auto' })));
  }
}
