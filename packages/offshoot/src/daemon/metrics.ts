import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets shared by the three duration histograms, in seconds. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** One open session as the scrape-time gauges see it. */
export interface SessionGaugeSample {
  db: string;
  branch: string;
  captureLagBytes: number;
  durableAgeSeconds: number;
  /** Evicted to stay within -max-open: no descriptor open on its checkout. */
  evicted: boolean;
}

/** The result of one GC pass, as the janitor reports it. */
export interface GcPassResult {
  tombstoned: number;
  deleted: number;
  backlog: number;
  error?: boolean;
}

type PromClient = typeof import('prom-client');

/**
 * The daemon's 23 Prometheus families (names frozen) on a private registry without Node's default metrics.
 * prom-client is loaded by `create`, so commands that never serve don't pay for importing it.
 */
export class DaemonMetrics {
  readonly #registry: Registry;
  readonly #sessionsOpen: Gauge;
  readonly #gcBacklog: Gauge;
  readonly #roCacheBytes: Gauge;
  readonly #flushTotal: Counter<'result' | 'kind'>;
  readonly #forkTotal: Counter<'path'>;
  readonly #forkModeTotal: Counter<'mode'>;
  readonly #reapTotal: Counter;
  readonly #gcTombstoned: Counter;
  readonly #gcDeleted: Counter;
  readonly #gcErrors: Counter;
  readonly #roCacheEvictions: Counter;
  readonly #janitorRuns: Counter<'result'>;
  readonly #requests: Counter<'op' | 'result'>;
  readonly #flushDuration: Histogram;
  readonly #forkDuration: Histogram;
  readonly #checkpointDuration: Histogram;
  readonly #maxOpen: Gauge;
  readonly #sessionEvictions: Counter;
  readonly #contractBreaches: Counter<'kind'>;
  #sessionSource: () => SessionGaugeSample[] = () => [];

  /** Loads prom-client and registers every family, with each labelled counter's combinations at 0. */
  static async create(version: string): Promise<DaemonMetrics> {
    return new DaemonMetrics(await import('prom-client'), version);
  }

  private constructor(prom: PromClient, version: string) {
    this.#registry = new prom.Registry();
    const registers = [this.#registry];
    const metrics = this;

    const buildInfo = new prom.Gauge({
      name: 'offshoot_build_info',
      help: 'Build information; the value is always 1.',
      labelNames: ['version'],
      registers,
    });
    buildInfo.set({ version }, 1);
    this.#sessionsOpen = new prom.Gauge({
      name: 'offshoot_sessions_open',
      help: 'Sessions open in this daemon.',
      registers,
    });
    new prom.Gauge({
      name: 'offshoot_capture_lag_bytes',
      help: 'WAL bytes committed in an open session but not yet flushed to the store.',
      labelNames: ['db', 'branch'],
      registers,
      collect() {
        this.reset();
        for (const s of metrics.#sessionSource()) this.set({ db: s.db, branch: s.branch }, s.captureLagBytes);
      },
    });
    new prom.Gauge({
      name: 'offshoot_durable_age_seconds',
      help: 'Seconds since an open session was last durable in the store.',
      labelNames: ['db', 'branch'],
      registers,
      collect() {
        this.reset();
        for (const s of metrics.#sessionSource()) this.set({ db: s.db, branch: s.branch }, s.durableAgeSeconds);
      },
    });
    new prom.Gauge({
      name: 'offshoot_sessions_evicted',
      help: 'Open sessions evicted to stay within -max-open: lease held, no descriptor open on the checkout.',
      registers,
      collect() {
        this.set(metrics.#sessionSource().filter((s) => s.evicted).length);
      },
    });
    this.#maxOpen = new prom.Gauge({
      name: 'offshoot_sessions_max_open',
      help: 'The most sessions whose checkouts have descriptors open at once (-max-open).',
      registers,
    });
    this.#gcBacklog = new prom.Gauge({
      name: 'offshoot_gc_backlog',
      help: 'Tombstoned objects waiting out the GC grace period after the last pass.',
      registers,
    });
    this.#roCacheBytes = new prom.Gauge({
      name: 'offshoot_ro_cache_bytes',
      help: 'Bytes used by read-only checkpoint checkouts, measured once per janitor pass.',
      registers,
    });

    this.#flushTotal = new prom.Counter({
      name: 'offshoot_flush_total',
      help: 'Session flushes by result and kind.',
      labelNames: ['result', 'kind'],
      registers,
    });
    for (const result of ['ok', 'error'])
      for (const kind of ['auto', 'manual']) this.#flushTotal.inc({ result, kind }, 0);
    this.#forkTotal = new prom.Counter({
      name: 'offshoot_fork_total',
      help: 'Forks by path: fast reuses the source chain, slow uploads a fork point first.',
      labelNames: ['path'],
      registers,
    });
    for (const path of ['fast', 'slow']) this.#forkTotal.inc({ path }, 0);
    this.#forkModeTotal = new prom.Counter({
      name: 'offshoot_fork_mode_total',
      help: 'Forks by storage class of the new branch.',
      labelNames: ['mode'],
      registers,
    });
    for (const mode of ['shared', 'materialized']) this.#forkModeTotal.inc({ mode }, 0);
    this.#reapTotal = new prom.Counter({
      name: 'offshoot_reap_total',
      help: 'Branches reaped after their TTL.',
      registers,
    });
    this.#gcTombstoned = new prom.Counter({
      name: 'offshoot_gc_tombstoned_total',
      help: 'Objects tombstoned by GC as unreachable.',
      registers,
    });
    this.#gcDeleted = new prom.Counter({
      name: 'offshoot_gc_deleted_total',
      help: 'Objects deleted by GC.',
      registers,
    });
    this.#gcErrors = new prom.Counter({ name: 'offshoot_gc_errors_total', help: 'GC passes that failed.', registers });
    this.#roCacheEvictions = new prom.Counter({
      name: 'offshoot_ro_cache_evictions_total',
      help: 'Read-only checkouts evicted to stay within the ro-cache budget.',
      registers,
    });
    this.#janitorRuns = new prom.Counter({
      name: 'offshoot_janitor_runs_total',
      help: 'Janitor ticks by result.',
      labelNames: ['result'],
      registers,
    });
    for (const result of ['ok', 'error']) this.#janitorRuns.inc({ result }, 0);
    this.#sessionEvictions = new prom.Counter({
      name: 'offshoot_session_evictions_total',
      help: 'Sessions evicted to stay within -max-open (each reconnects on its next write or request).',
      registers,
    });
    this.#contractBreaches = new prom.Counter({
      name: 'offshoot_contract_breaches_total',
      help: 'Checkouts found out of WAL mode (journal_mode) or beside a rollback journal (rollback_journal).',
      labelNames: ['kind'],
      registers,
    });
    for (const kind of ['journal_mode', 'rollback_journal']) this.#contractBreaches.inc({ kind }, 0);
    this.#requests = new prom.Counter({
      name: 'offshoot_requests_total',
      help: 'Requests answered, over the socket or HTTP, by op and result.',
      labelNames: ['op', 'result'],
      registers,
    });

    const histogram = (name: string, help: string): Histogram =>
      new prom.Histogram({ name, help, buckets: DURATION_BUCKETS, registers });
    this.#flushDuration = histogram('offshoot_flush_duration_seconds', 'Duration of session flushes, auto and manual.');
    this.#forkDuration = histogram('offshoot_fork_duration_seconds', 'Duration of forks.');
    this.#checkpointDuration = histogram('offshoot_checkpoint_duration_seconds', 'Duration of at-rest checkpoints.');
  }

  /** Sets where the two per-session gauges come from; called at every scrape, so it must be cheap and synchronous. */
  setSessionSource(source: () => SessionGaugeSample[]): void {
    this.#sessionSource = source;
  }

  /** Records one flush. */
  flushed(kind: 'auto' | 'manual', ok: boolean, seconds: number): void {
    this.#flushTotal.inc({ result: ok ? 'ok' : 'error', kind });
    this.#flushDuration.observe(seconds);
  }

  /** Records one fork. */
  forked(path: 'fast' | 'slow', mode: 'shared' | 'materialized', seconds: number): void {
    this.#forkTotal.inc({ path });
    this.#forkModeTotal.inc({ mode });
    this.#forkDuration.observe(seconds);
  }

  /** Records one at-rest checkpoint. */
  checkpointed(seconds: number): void {
    this.#checkpointDuration.observe(seconds);
  }

  /** Counts reaped branches. */
  reaped(n: number): void {
    if (n > 0) this.#reapTotal.inc(n);
  }

  /** Records one GC pass. */
  gcPass(r: GcPassResult): void {
    if (r.tombstoned > 0) this.#gcTombstoned.inc(r.tombstoned);
    if (r.deleted > 0) this.#gcDeleted.inc(r.deleted);
    this.#gcBacklog.set(r.backlog);
    if (r.error === true) this.#gcErrors.inc();
  }

  /** Counts one janitor tick. */
  janitorRun(result: 'ok' | 'error'): void {
    this.#janitorRuns.inc({ result });
  }

  /** Records the ro-cache usage of one janitor pass and the evictions it made. */
  roCache(bytes: number, evictions: number): void {
    this.#roCacheBytes.set(bytes);
    if (evictions > 0) this.#roCacheEvictions.inc(evictions);
  }

  /** Shows every op's request counts at 0 before the first request. */
  requestOps(ops: readonly string[]): void {
    for (const op of ops) for (const result of ['ok', 'error']) this.#requests.inc({ op, result }, 0);
  }

  /** Counts one answered request of a known op. */
  requested(op: string, ok: boolean): void {
    this.#requests.inc({ op, result: ok ? 'ok' : 'error' });
  }

  /** Sets the number of open sessions. */
  sessionsOpen(n: number): void {
    this.#sessionsOpen.set(n);
  }

  /** Sets the open-checkout budget. */
  maxOpen(n: number): void {
    this.#maxOpen.set(n);
  }

  /** Counts one session eviction. */
  sessionEvicted(): void {
    this.#sessionEvictions.inc();
  }

  /** Counts one broken connection contract. */
  contractBroken(kind: 'journal_mode' | 'rollback_journal'): void {
    this.#contractBreaches.inc({ kind });
  }

  /** The exposition in Prometheus text format 0.0.4. */
  render(): Promise<string> {
    return this.#registry.metrics();
  }

  /** The Content-Type to serve `render()` with. */
  get contentType(): string {
    return this.#registry.contentType;
  }
}
