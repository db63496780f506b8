import { setTimeout as sleep } from 'node:timers/promises';
import type { Origin } from '../core/history.js';
import { makeContext, newLeaseHolder } from '../ops/context.js';
import { EphemeralForks } from '../ops/fork.js';
import { LivenessBeacon } from '../ops/lease.js';
import { recoverUnsyncedCheckouts } from '../ops/open.js';
import { checkSocketPath } from '../protocol/socket-path.js';
import { sweepSessionScratch } from '../session/scratch-dir.js';
import type { Store } from '../store/store.js';
import type { DaemonContext, DaemonOptions } from './daemon-context.js';
import {
  KEPT_CONNECTIONS_MAX,
  LIVENESS_EVERY_MS,
  LIVENESS_TTL_MS,
  placesAfforded,
  SHUTDOWN_TIMEOUT_MS,
} from './daemon-options.js';
import { openFileLimit } from '../platform/open-file-limit.js';
import { dispatch, OPS } from './dispatch.js';
import { EventBus } from './event-bus.js';
import { BackgroundFlusher } from './flusher.js';
import { startHttpServer, type HttpServerHandle } from './http-server.js';
import { Janitor } from './janitor.js';
import { DaemonMetrics } from './metrics.js';
import { SerialQueue } from './serial-queue.js';
import { CheckoutBudget } from './checkout-budget.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import { EvictedWatch } from './evicted-watch.js';
import { closeLive, evictedCheckoutChanged, evictLive } from './session-lifecycle.js';
import { syncCheckout } from './sync-checkout.js';
import { SessionTable } from './session-table.js';
import { SocketServer } from './socket-server.js';
import { StoreLock } from './store-lock.js';
import { keepConnections, type KeptConnections } from '../sqlite/kept-connection.js';

const ABANDON_WAIT_MS = 2000;
/** Who asks for what the daemon does of its own accord (the janitor's reaps, its GC): requests say their own. */
const JANITOR: Origin = { actor: 'human', surface: 'janitor' };
/** Lease renewals in flight at once, whatever the number of sessions (each opens a few store files). */
const RENEWALS_AT_ONCE = 8;

/** What a started daemon listens on. */
export interface DaemonAddresses {
  socket: string;
  /** The bound HTTP address, when -http is on. */
  http: string | undefined;
}

/**
 * `offshoot serve`: one daemon per checkout root, any number per store. It owns the live sessions (leases, capture, background flushes), answers
 * the wire protocol on a private unix socket (and, opt-in, over HTTP), and runs the janitor.
 */
export class Daemon {
  private stopping: Promise<void> | undefined;
  private resolveDone: () => void = () => undefined;
  /** Resolves once a shutdown (signal, shutdown op, or a call to shutdown) has finished. */
  readonly done: Promise<void>;

  private constructor(
    private readonly d: DaemonContext,
    private readonly lock: StoreLock,
    private readonly server: SocketServer,
    private readonly http: HttpServerHandle | undefined,
    private readonly flusher: BackgroundFlusher,
    private readonly janitor: Janitor,
    /** Stops keeping the connections of this daemon's checkouts between their users, closing those kept. */
    private readonly stopKeeping: () => void,
  ) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /**
   * Starts serving the store: takes the checkout root's daemon lock (refusing if another daemon holds it), listens on the
   * socket (replacing a stale socket file, refusing a live one), then HTTP, the flusher and the janitor.
   */
  static async start(store: Store, checkoutRoot: string, options: DaemonOptions, version: string): Promise<Daemon> {
    checkSocketPath(options.socket);
    const lock = await StoreLock.acquire(checkoutRoot, options.socket);
    let server: SocketServer | undefined;
    let liveness: LivenessBeacon | undefined;
    try {
      const swept = await sweepSessionScratch(checkoutRoot).catch((err: Error) => {
        options.log(`offshoot: warning: cannot sweep session scratch under ${checkoutRoot}: ${err.message}`);
        return 0;
      });
      if (swept > 0) options.log(`offshoot: removed ${swept} session scratch dir(s) left by an earlier daemon`);
      const gone = await EphemeralForks.sweep(checkoutRoot, store).catch((err: Error) => {
        options.log(`offshoot: warning: cannot sweep ephemeral checkouts under ${checkoutRoot}: ${err.message}`);
        return 0;
      });
      if (gone > 0) options.log(`offshoot: removed ${gone} checkout(s) of ephemeral forks an earlier daemon held`);
      const warn = (m: string): void => options.log(`offshoot: warning: ${m}`);
      const common = { warn, snapshotEvery: options.snapshotEvery, forkFloor: options.snapshotEvery };
      const holder = newLeaseHolder();
      const ephemeral = new EphemeralForks(
        store,
        checkoutRoot,
        () => liveness?.pinned() ?? Promise.resolve(),
        (t, path) => syncCheckout(sessions, t, path),
      );
      // Every op and session sees the ephemeral forks held here; GC sees the store alone.
      const served = store.through(ephemeral.overlay);
      const metrics = await DaemonMetrics.create(version);
      metrics.requestOps(OPS);
      const events = new EventBus();
      const sessions = new SessionTable((n) => metrics.sessionsOpen(n));
      metrics.maxOpen(options.maxOpen);
      let daemon: Daemon | undefined;
      let keeping: KeptConnections | undefined;
      const sessionCtx = makeContext(served, checkoutRoot, { ...common, holder, ephemeral });
      // Checkouts an earlier session placed before their copy was on the disk: whole again before anyone opens them.
      for (const line of await recoverUnsyncedCheckouts(sessionCtx)) warn(line);
      liveness = await LivenessBeacon.start(
        sessionCtx,
        options.leaseTtlMs ?? LIVENESS_TTL_MS,
        options.renewEveryMs ?? LIVENESS_EVERY_MS,
        () => {
          for (const s of sessions.live()) void s.session.renewLease();
        },
        () => ephemeral.overlay.pins(),
      );
      const atRest = `${holder}:at-rest`;
      const d: DaemonContext = {
        ops: makeContext(served, checkoutRoot, { ...common, holder: atRest, ephemeral, origin: JANITOR }),
        sessionCtx,
        durable: makeContext(store, checkoutRoot, { ...common, holder: atRest, origin: JANITOR }),
        ephemeral,
        sessions,
        budget: new CheckoutBudget(options.maxOpen, {
          live: () => sessions.live(),
          evict: (slot) => evictLive(d, slot),
          trimKept: () => keeping?.trim(),
        }),
        evictedWatch: new EvictedWatch({
          changed: (slot) => evictedCheckoutChanged(d, slot),
          log: options.log,
        }),
        renewals: new ConcurrencyGate(RENEWALS_AT_ONCE),
        liveness,
        events,
        metrics,
        options,
        maintenance: new SerialQueue(),
        requestShutdown: () => setImmediate(() => void daemon?.shutdown()),
      };
      metrics.setSessionSource(() =>
        sessions.live().map((s) => ({
          db: s.target.db,
          branch: s.target.branch,
          captureLagBytes: s.session.info().capture_lag_bytes,
          durableAgeSeconds: s.session.durableAgeSeconds(),
          evicted: s.session.evicted,
        })),
      );
      server = await SocketServer.listen(options.socket, {
        dispatch: (req) => dispatch(d, req, 'socket'),
        subscribe: () => events.subscribe(),
      });
      const http = options.http
        ? await startHttpServer({
            addr: options.http.addr,
            token: options.http.token,
            dispatch: (req, t) => dispatch(d, req, t),
            metrics,
            events,
            sessionCount: () => sessions.live().length,
            ...(options.httpFallback ? { fallback: options.httpFallback(d) } : {}),
          })
        : undefined;
      // A checkout's connection is kept from a session's close through the diffs that read it (see keepConnections),
      // in the places of -max-open no session holds, and only those the file limit affords (none when it is low).
      const affordable = placesAfforded(openFileLimit());
      const kept = keepConnections(checkoutRoot, () => Math.min(KEPT_CONNECTIONS_MAX, d.budget.spare(affordable)));
      keeping = kept;
      daemon = new Daemon(d, lock, server, http, new BackgroundFlusher(d), new Janitor(d), () => kept.stop());
      daemon.flusher.start();
      daemon.janitor.start();
      return daemon;
    } catch (err) {
      await liveness?.stop();
      await server?.close();
      await server?.removeFile();
      await lock.release();
      throw err;
    }
  }

  /** The socket and (if on) HTTP addresses. */
  get addresses(): DaemonAddresses {
    return { socket: this.server.path, http: this.http?.address };
  }

  /**
   * Graceful shutdown, in order: janitor and flusher, the socket listener and its connections (requests in flight
   * are answered), HTTP, opens still in flight, then every session closed with a final flush, and the socket file.
   * Past the shutdown timeout (30 s) whatever is left is abandoned: connections dropped, sessions released unflushed.
   */
  shutdown(): Promise<void> {
    this.stopping ??= this.stop().finally(() => this.resolveDone());
    return this.stopping;
  }

  private async stop(): Promise<void> {
    const { d } = this;
    d.sessions.stopOpening();
    d.options.log('offshoot: shutting down');
    const timeoutMs = d.options.shutdownTimeoutMs ?? SHUTDOWN_TIMEOUT_MS;
    const timer = new AbortController();
    const graceful = this.stopGracefully().then(() => true);
    const finished = await Promise.race([
      graceful,
      sleep(timeoutMs, false, { signal: timer.signal }).catch(() => false),
    ]);
    timer.abort();
    if (!finished) {
      d.options.log(`offshoot: shutdown did not finish within ${timeoutMs / 1000}s; abandoning what is left`);
      this.server.destroyAll();
      // Whatever is stuck (a flush, a close) may never settle: give the abandons a moment, never more.
      const abandoned = Promise.allSettled([
        this.server.close(),
        this.http?.close(),
        ...d.sessions.live().map((s) => s.session.abandon()),
      ]);
      await Promise.race([abandoned, sleep(ABANDON_WAIT_MS)]);
    }
    d.evictedWatch.close();
    // Before any checkout is removed below, and so a stopped daemon leaves no connection open.
    this.stopKeeping();
    // Gone with the daemon, by design: what its ephemeral forks held, and their checkouts.
    d.ephemeral.discardAll();
    // After the sessions: a lease not given back is free at once rather than after the liveness object's length.
    await d.liveness.stop();
    await this.server.removeFile();
    await this.lock.release();
    d.options.log('offshoot: stopped');
  }

  private async stopGracefully(): Promise<void> {
    const { d } = this;
    await this.janitor.stop();
    await this.flusher.stop();
    await this.server.close();
    await this.http?.close();
    await d.sessions.whenNoPending();
    await Promise.all(
      d.sessions.live().map(async (slot) => {
        if (slot.state === 'closing') return slot.queue.idle();
        slot.state = 'closing';
        await closeLive(d, slot).catch((err: Error) =>
          d.options.log(`offshoot: session: ${slot.target.db}@${slot.target.branch}: close failed: ${err.message}`),
        );
      }),
    );
  }
}
