import type { Origin } from '../../../core/history.js';
import type { EphemeralHost } from './ephemeral-host.js';
import { newLeaseHolder } from './lease-holder.js';
import type { Store } from '../../../store/store.js';

/** Progress of one long step (import, export, materialize): total and done in bytes. */
export interface ProgressSink {
  start(label: string, total: number): void;
  update(done: number): void;
  stop(): void;
}

/** Everything an operation needs from outside: the store, where checkouts live, the clock and how to warn. */
export interface OpsContext {
  store: Store;
  /** Root under which checkouts/ and checkouts-ro/ live. */
  checkoutRoot: string;
  /** The clock; injected so tests can move time. */
  now: () => Date;
  /** Non-fatal warnings (lost local edits, busy checkout); the CLI prints them to stderr. */
  warn: (message: string) => void;
  /** Lease holder identity: a fresh random `host/pid/id` per context by default (see core/lease-holder.ts). */
  holder: string;
  /** How long a lease an at-rest mutation takes on its branch lasts (its own duration; not renewed). */
  leaseTtlMs: number;
  /** A chain this deep (members) is materialized on fork instead of shared. */
  forkFloor: number;
  /** Flushes since the last snapshot before a checkpoint writes a snapshot instead of a segment. */
  snapshotEvery: number;
  /** Optional progress reporting for long work. */
  progress?: () => ProgressSink;
  /**
   * Who asks, and through what, for the records the verbs append to a branch's log; the surface (CLI, daemon, MCP
   * server) says it, never the verb. Absent: a human calling the engine as a library.
   */
  origin?: Origin;
  /** The ephemeral forks of the daemon this context serves; absent elsewhere. */
  ephemeral?: EphemeralHost;
}

/** The default length of the lease an at-rest mutation holds on its branch. */
export const DEFAULT_AT_REST_LEASE_MS = 30_000;

/** The default fork-time depth floor and snapshot cadence. */
export const DEFAULT_SNAPSHOT_EVERY = 16;

/** Builds a context with defaults for the fields callers rarely set. */
export function makeContext(
  store: Store,
  checkoutRoot: string,
  over: Partial<Omit<OpsContext, 'store' | 'checkoutRoot'>> = {},
): OpsContext {
  // Made on first use: a listing never takes a lease, and a holder costs the random bytes and the pid space's reads.
  let holder = over.holder;
  return {
    store,
    checkoutRoot,
    now: over.now ?? (() => new Date()),
    warn: over.warn ?? ((m) => process.stderr.write(`offshoot: warning: ${m}\n`)),
    get holder() {
      holder ??= newLeaseHolder();
      return holder;
    },
    leaseTtlMs: over.leaseTtlMs ?? DEFAULT_AT_REST_LEASE_MS,
    forkFloor: over.forkFloor ?? DEFAULT_SNAPSHOT_EVERY,
    snapshotEvery: over.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY,
    ...(over.progress ? { progress: over.progress } : {}),
    ...(over.origin ? { origin: over.origin } : {}),
    ...(over.ephemeral ? { ephemeral: over.ephemeral } : {}),
  };
}

/** The context `ctx` with `origin` as who asks; the rest, its lazily made lease holder included, is shared. */
export function withOrigin(ctx: OpsContext, origin: Origin): OpsContext {
  const out = Object.defineProperties({}, Object.getOwnPropertyDescriptors(ctx)) as OpsContext;
  out.origin = origin;
  return out;
}
