// The defaults of a daemon's options (DaemonOptions itself stands beside the DaemonContext that carries it).

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

/** How many sessions' descriptors the file limit has room for beside RESERVED_FDS (none, or fewer, when it is low). */
export function placesAfforded(fileLimit: number | undefined): number {
  return Math.floor(((fileLimit ?? 1024) - RESERVED_FDS) / FDS_PER_SESSION);
}

/** The -max-open a daemon gets by default: as many capturing sessions as its file limit has room for (at least 1). */
export function defaultMaxOpen(fileLimit: number | undefined): number {
  return Math.max(1, placesAfforded(fileLimit));
}

/**
 * The most connections a daemon keeps on closed checkouts at once (each in a place of -max-open no session holds,
 * and only in places its file limit affords): enough for an episode's diffs, few enough to stay flat under any load.
 */
export const KEPT_CONNECTIONS_MAX = 4;

/** The liveness object's default length and rewrite interval. */
export const LIVENESS_TTL_MS = 30_000;
export const LIVENESS_EVERY_MS = 10_000;

/** A graceful shutdown gives up on waiting after this long and abandons what is left. */
export const SHUTDOWN_TIMEOUT_MS = 30_000;
