import { randomBytes } from 'node:crypto';
import { hasCode } from '../../../core/errors.js';
import { LIVENESS_PREFIX, livenessKey } from '../../../core/keys.js';
import { type LivenessPin, livenessExpiry, serializeLiveness } from '../../../core/liveness.js';
import type { OpsContext } from '../context/context.js';
import { parseLeaseHolder } from '../context/lease-holder.js';

/**
 * How long a daemon session's own lease lasts: long, since it stands on its daemon's liveness object, which does the
 * frequent renewing for every session at once. An earlier implementation, which knows nothing of that object, waits
 * up to this long for the branch of a killed daemon.
 */
export const DAEMON_SESSION_LEASE_MS = 15 * 60_000;

/** The session lease a daemon whose liveness lasts livenessTtlMs gives its sessions: never shorter than 3 of those. */
export function daemonSessionLeaseMs(livenessTtlMs: number): number {
  return Math.max(DAEMON_SESSION_LEASE_MS, 3 * livenessTtlMs);
}

/** A killed daemon's liveness object is removed by the next daemon to start once it has been stale this long. */
export const STALE_LIVENESS_SWEEP_MS = 60 * 60_000;

/**
 * A daemon saying it is alive: it writes `liveness/{id}` ({holder, expiry now + ttlMs}) when started and every
 * everyMs after, and removes it when stopped. The long leases of the daemon's sessions name the id and count as live
 * only while the object is fresh, so a thousand idle sessions cost one store write a period, and a killed daemon's
 * branches are free again once its object goes stale (ttlMs), as with a short lease. The object is written before
 * start returns, so no lease names an object that was never there.
 */
export class LivenessBeacon {
  private timer: NodeJS.Timeout | undefined;
  /** Every write, one after another: the last one queued, settled or not. */
  private queue: Promise<void> = Promise.resolve();
  /** A write queued and not yet started: whoever needs one meanwhile shares it. */
  private queued: Promise<void> | undefined;
  /** Writes queued or under way. */
  private pending = 0;
  /** The pins the last write that landed carried, as `lineage@txid`. */
  private landed = new Set<string>();
  private stopped = false;
  private sweeping: Promise<void> | undefined;
  /** The expiry the last write that landed recorded. */
  private expiry = 0;

  private constructor(
    private readonly ctx: OpsContext,
    /** The id sessions' leases name (16 hex digits: the daemon holder's own id). */
    readonly id: string,
    private readonly ttlMs: number,
    private readonly onLapse: () => void,
    private readonly pins: () => LivenessPin[],
  ) {}

  /**
   * Writes the liveness object once (failing as the store does), then every everyMs. onLapse runs after a write
   * that found the previous one already expired (the daemon was paused, or the store out of reach, for longer than
   * ttlMs): anyone may have taken the daemon's branches meanwhile, and its sessions should find out now rather than
   * at their next flush. `pins` gives, at each write, the durable states the daemon's ephemeral forks stand on, which
   * the object carries for GC to keep.
   */
  static async start(
    ctx: OpsContext,
    ttlMs: number,
    everyMs: number,
    onLapse: () => void = () => undefined,
    pins: () => LivenessPin[] = () => [],
  ): Promise<LivenessBeacon> {
    const id = parseLeaseHolder(ctx.holder)?.id ?? randomBytes(8).toString('hex');
    const b = new LivenessBeacon(ctx, id, ttlMs, onLapse, pins);
    await b.writeNext();
    b.timer = setInterval(() => void b.beat(), Math.max(1, everyMs));
    b.timer.unref();
    b.sweeping = b
      .sweep()
      .catch((err: unknown) => ctx.warn(`cannot sweep stale liveness objects: ${(err as Error).message}`));
    return b;
  }

  /**
   * Removes the liveness objects of daemons killed long ago (stale for STALE_LIVENESS_SWEEP_MS): a missing object
   * ends a lease exactly as a stale one does, so this changes no reader's answer. Each is deleted only as read, so
   * one its daemon rewrote meanwhile (it was only paused) stays.
   */
  private async sweep(): Promise<void> {
    for (const o of await this.ctx.store.backend.list(LIVENESS_PREFIX)) {
      if (o.key === livenessKey(this.id)) continue;
      const got = await this.ctx.store.backend.get(o.key).catch(() => undefined);
      const t = got === undefined ? undefined : livenessExpiry(got.body);
      if (got === undefined || t === undefined || t + STALE_LIVENESS_SWEEP_MS > this.ctx.now().getTime()) continue;
      await this.ctx.store.backend.delete(o.key, { ifMatch: got.etag }).catch(() => undefined);
    }
  }

  /**
   * Resolves once a write carrying every pin the daemon has now has landed: at once when the last write carried them
   * all, else after a write made for it (shared by every caller that arrives before it starts). How a new ephemeral
   * fork is pinned before it is answered; a thousand forks at one fork point cost one write.
   */
  async pinned(): Promise<void> {
    if (this.pins().every((p) => this.landed.has(pinName(p)))) return;
    await this.writeNext();
  }

  /** Stops writing and removes the object: the daemon's leases (given back by then) stand on nothing. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.queue;
    await this.sweeping;
    try {
      await this.ctx.store.backend.delete(livenessKey(this.id));
    } catch (err) {
      if (!hasCode(err, 'NOT_FOUND'))
        this.ctx.warn(`cannot remove ${livenessKey(this.id)} (it goes stale on its own): ${(err as Error).message}`);
    }
  }

  // A tick that finds a write queued or under way leaves it be.
  private beat(): void {
    if (this.stopped || this.pending > 0) return;
    this.writeNext().catch((err: unknown) =>
      this.ctx.warn(`liveness write failed (retried): ${(err as Error).message}`),
    );
  }

  // One write at a time, in order; a write starts with the pins of that moment.
  private writeNext(): Promise<void> {
    if (this.queued === undefined) {
      this.pending++;
      const run = this.queue
        .then(() => {
          this.queued = undefined;
          return this.write();
        })
        .finally(() => this.pending--);
      this.queued = run;
      this.queue = run.catch(() => undefined);
    }
    return this.queued;
  }

  private async write(): Promise<void> {
    const now = this.ctx.now().getTime();
    const lapsed = this.expiry !== 0 && now >= this.expiry;
    const expiry = now + this.ttlMs;
    const pins = this.pins();
    await this.ctx.store.backend.put(
      livenessKey(this.id),
      serializeLiveness({ holder: this.ctx.holder, expiry: new Date(expiry).toISOString(), pins }),
    );
    this.landed = new Set(pins.map(pinName));
    this.expiry = expiry;
    if (lapsed && !this.stopped) {
      this.ctx.warn(`this daemon's liveness lapsed (paused, or the store out of reach); checking its sessions' leases`);
      this.onLapse();
    }
  }
}

function pinName(p: LivenessPin): string {
  return `${p.lineage}@${p.txid}`;
}
