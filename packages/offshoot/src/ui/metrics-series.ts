import type { ApiSample } from './api-types.js';

/** The daemon counters a sample sums (every label combination), by sample field. */
const FAMILIES = {
  flushes: 'offshoot_flush_total',
  forks: 'offshoot_fork_total',
  gc_passes: 'offshoot_janitor_runs_total',
  reaped: 'offshoot_reap_total',
} as const;

type Totals = Record<keyof typeof FAMILIES, number>;

/** Sums each counter family over its label combinations in Prometheus text exposition. */
export function counterTotals(text: string): Totals {
  const totals: Totals = { flushes: 0, forks: 0, gc_passes: 0, reaped: 0 };
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+)(?:\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m === null) continue;
    for (const [field, family] of Object.entries(FAMILIES) as Array<[keyof Totals, string]>)
      if (m[1] === family) totals[field] += Number(m[2]);
  }
  return totals;
}

/**
 * A ring of counter deltas, one per interval, read from the daemon's own Prometheus rendering, so the page's small
 * time series and a scrape agree. Sampling starts at construction; the timer never keeps the process alive.
 */
export class MetricsSeries {
  readonly #samples: ApiSample[] = [];
  #last: Totals | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly render: () => Promise<string>,
    readonly intervalSeconds = 5,
    private readonly keep = 120,
  ) {
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), intervalSeconds * 1000);
    this.#timer.unref();
  }

  /** Takes one sample now (also called by the timer). */
  async sample(): Promise<void> {
    const now = counterTotals(await this.render());
    const prev = this.#last;
    this.#last = now;
    if (prev === undefined) return;
    this.#samples.push({
      ts: new Date().toISOString(),
      flushes: now.flushes - prev.flushes,
      forks: now.forks - prev.forks,
      gc_passes: now.gc_passes - prev.gc_passes,
      reaped: now.reaped - prev.reaped,
    });
    if (this.#samples.length > this.keep) this.#samples.shift();
  }

  /** The samples so far, oldest first. */
  samples(): ApiSample[] {
    return [...this.#samples];
  }

  /** Stops sampling. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
