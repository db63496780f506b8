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
  /** The opt-in HTTP listener. */
  http?: { addr: string; token: string };
  /** Builds extra routes for the HTTP listener from the running daemon (`serve -ui` mounts the dashboard). */
  httpFallback?: (d: DaemonContext) => HttpFallback;
  /** Session lease length and renewal interval (defaults 30 s and 10 s). */
  leaseTtlMs?: number;
  renewEveryMs?: number;
  /** Upper bound on a graceful shutdown (default 30 s). */
  shutdownTimeoutMs?: number;
  /** Where daemon log lines go (stderr in `serve`). */
  log: (line: string) => void;
}

/** A graceful shutdown gives up on waiting after this long and abandons what is left. */
export const SHUTDOWN_TIMEOUT_MS = 30_000;
