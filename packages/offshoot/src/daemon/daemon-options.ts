import type { Duration } from '../core/duration.js';
import type { DaemonContext } from './daemon-context.js';
import type { HttpFallback } from './http-server.js';

/** How a daemon runs; every value comes from a `serve` flag (none is persisted). */
export interface DaemonOptions {
  /** The canonical store this daemon serves (see canonicalStore); requests stating another store are refused. */
  store: string;
  /** The unix socket path (already length-checked). */
  socket: string;
  /** Background flush interval; 0 disables background flushing. */
  flushEveryMs: number;
  /** Flushes between snapshots; also this daemon's fork-time depth floor. */
  snapshotEvery: number;
  /** Janitor interval (reap, claim clearing, GC, ro-cache); 0 disables the janitor. */
  reapEveryMs: number;
  /** How long an unreachable object waits before the janitor's GC deletes it. */
  gcGrace: Duration;
  /** Bytes the read-only checkout cache may use before LRU eviction; 0 is unlimited. */
  roCacheBudget: number;
  /** Sessions whose checkouts may have descriptors open at once; colder ones are evicted (see defaultMaxOpen). */
  maxOpen: number;
  /** The opt-in HTTP listener. */
  http?: { addr: string; token: string };
  /** Builds extra routes for the HTTP listener from the running daemon (`serve -ui` mounts the dashboard). */
  httpFallback?: (d: DaemonContext) => HttpFallback;
  /**
   * How long the daemon's liveness object lasts and how often it is rewritten (defaults 30 s and 10 s): a killed
   * daemon's branches are free once it has gone that long. Its sessions' own leases last daemonSessionLeaseMs.
   */
  leaseTtlMs?: number;
  renewEveryMs?: number;
  /** Upper bound on a graceful shutdown (default 30 s). */
  shutdownTimeoutMs?: number;
  /** Where daemon log lines go (stderr in `serve`). */
  log: (line: string) => void;
}

/**
 * Descriptors budgeted per capturing session: the 7 it holds (its two SQLite connections, the main file and the
 * -wal each; the -shm they share; capture's raw reads of the main file and the -shm) and 3 for what opening,
 * flushing or evicting one opens for a moment (a frozen read of the checkout, a flush's files).
 */
export const FDS_PER_SESSION = 10;

/**
 * Descriptors left for everything else: the process itself (about 24), the listeners and client connections, store
 * requests (lease renewals run 8 at a time), materializations.
 */
export const RESERVED_FDS = 96;

/** The -max-open a daemon gets by default: as many capturing sessions as its file limit has room for (at least 1). */
export function defaultMaxOpen(fileLimit: number | undefined): number {
  return Math.max(1, Math.floor(((fileLimit ?? 1024) - RESERVED_FDS) / FDS_PER_SESSION));
}

/** The liveness object's default length and rewrite interval. */
export const LIVENESS_TTL_MS = 30_000;
export const LIVENESS_EVERY_MS = 10_000;

/** A graceful shutdown gives up on waiting after this long and abandons what is left. */
export const SHUTDOWN_TIMEOUT_MS = 30_000;
