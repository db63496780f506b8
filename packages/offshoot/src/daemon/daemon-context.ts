import type { Duration } from '../core/duration.js';
import type { Target } from '../core/target.js';
import type { OpsContext } from '../ops/context.js';
import type { EphemeralForks } from '../ops/fork.js';
import type { LivenessBeacon } from '../ops/lease.js';
import type { CheckoutBudget } from './checkout-budget.js';
import type { ConcurrencyGate } from './concurrency-gate.js';
import type { EvictedWatch } from './evicted-watch.js';
import type { EventBus } from './event-bus.js';
import type { HttpFallback } from './http-server.js';
import type { DaemonMetrics } from './metrics.js';
import type { SerialQueue } from './serial-queue.js';
import type { SessionTable } from './session-table.js';

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

/** Where a request arrived: the unix socket, or the opt-in HTTP listener (which refuses export and subscribe). */
export type Transport = 'socket' | 'http';

/** Everything an op handler, the flusher and the janitor share. */
export interface DaemonContext {
  /**
   * Context for at-rest ops. Its holder differs from the sessions' holder, so an at-rest op treats a session's lease
   * as foreign and never writes under a live session.
   */
  ops: OpsContext;
  /** Context sessions are opened with; its holder is the lease holder every session reports. */
  sessionCtx: OpsContext;
  /**
   * Context of GC (the gc op and the janitor's pass): the store itself, without the ephemeral forks held here, which
   * GC's mark never depends on (their pins in the liveness object keep what they stand on).
   */
  durable: OpsContext;
  /** The ephemeral forks this daemon holds, which `ops` and `sessionCtx` see and the store does not. */
  ephemeral: EphemeralForks;
  sessions: SessionTable;
  /** The open-checkout budget (-max-open): who may hold descriptors on a checkout, and eviction of the coldest. */
  budget: CheckoutBudget;
  /** Watches the checkouts of evicted sessions for writes. */
  evictedWatch: EvictedWatch;
  /** Bounds the lease renewals of all sessions running at once. */
  renewals: ConcurrencyGate;
  /** The daemon's liveness object, which every session's long lease stands on. */
  liveness: LivenessBeacon;
  events: EventBus;
  metrics: DaemonMetrics;
  options: DaemonOptions;
  /** Janitor passes and the gc op run here one at a time, so two GC passes never race on the tombstones. */
  maintenance: SerialQueue;
  /** Starts a graceful shutdown after the current response is written. */
  requestShutdown(): void;
}

/**
 * The context for a lease-taking at-rest op that is allowed beside a session (touch, protect): a branch with a live
 * session here is written as that session's holder, whose lease already covers it; any other branch as d.ops.
 */
export function contextFor(d: DaemonContext, t: Target): OpsContext {
  return d.sessions.get(t)?.state === 'open' ? d.sessionCtx : d.ops;
}
