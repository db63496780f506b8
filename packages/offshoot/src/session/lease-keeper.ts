import { fail, hasCode, type OffshootError } from '../core/errors.js';
import type { Meta } from '../core/meta.js';
import { nameMap } from '../core/name-map.js';
import { type Ref, withoutLease } from '../core/ref.js';
import type { OpsContext } from '../ops/context.js';
import type { LogStamp } from '../ops/live-branch.js';
import type { VersionedRef } from '../store/store.js';

/** Attempts of a head's compare-and-swap that met a ref moved only by the session's own lease renewals. */
const CAS_RETRIES = 8;

/** How a session keeps its lease: its length, how often it is renewed, and what the renewals run through. */
export interface KeepOptions {
  leaseMs: number;
  renewEveryMs: number;
  /** The daemon's liveness object the lease stands on, named again by every renewal. */
  liveness?: string;
  /** Runs each renewal (a daemon bounds how many run at once). */
  renewal?: <T>(renew: () => Promise<T>) => Promise<T>;
  log?: (message: string) => void;
}

/** What the keeper asks of its session: whether it still keeps the lease, and what to do once fenced. */
export interface KeeperHooks {
  /** False once the session is closed or has a terminal error: renewals stop. */
  active(): boolean;
  /** The lease is someone else's now: the session is fenced. */
  fenced(err: OffshootError): void;
}

/**
 * A session's lease and its own writes of its ref, one at a time: renewals on a timer, the compare-and-swap that
 * records a flushed head (fenced: it moves nothing once the lease is no longer the session's at its epoch), and
 * the epoch every object of the session is written under.
 */
export class LeaseKeeper {
  /** The epoch every object of the session is written under (a flush past an orphan moves it). */
  epoch: number;
  /** The session's own writes of its ref (renewal, head advance, epoch bump, release), one at a time. */
  private refWrites: Promise<unknown> = Promise.resolve();
  private renewing = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: OpsContext,
    private readonly db: string,
    private readonly branch: string,
    epoch: number,
    private readonly opts: KeepOptions,
    private readonly hooks: KeeperHooks,
  ) {
    this.epoch = epoch;
  }

  /** The lease holder identity. */
  get holder(): string {
    return this.ctx.holder;
  }

  /** Starts renewing the lease on its cadence. */
  start(): void {
    this.timer = setInterval(() => void this.renew(), Math.max(1, this.opts.renewEveryMs));
    this.timer.unref();
  }

  /** Stops renewing (the lease is given back, or left to expire). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Extends the lease; a tick that finds the previous renewal still under way leaves the renewing to it. */
  async renew(): Promise<void> {
    if (!this.hooks.active() || this.renewing) return;
    this.renewing = true;
    try {
      const renewal = this.opts.renewal ?? ((renew) => renew());
      await renewal(() => this.writingRef(() => this.renewNow()));
    } finally {
      this.renewing = false;
    }
  }

  private async renewNow(): Promise<void> {
    if (!this.hooks.active()) return;
    const ms = this.opts.leaseMs;
    const liveness = this.opts.liveness;
    try {
      await this.ctx.store.updateRef(this.db, this.branch, (r) => {
        if (r.lease_holder !== this.holder || r.epoch !== this.epoch) {
          throw fail(
            'FENCED',
            `session ${this.db}@${this.branch} lost its lease to ${r.lease_holder ?? 'nobody'} (epoch ${r.epoch})`,
            {
              hint: `close the session (offshoot session close ${this.db}@${this.branch}) and open it again`,
            },
          );
        }
        const next = { ...r, lease_expiry: new Date(this.ctx.now().getTime() + ms).toISOString() };
        // A writer that knows nothing of the liveness object may have dropped its name: the renewal puts it back.
        if (liveness !== undefined) next.lease_liveness = liveness;
        return next;
      });
    } catch (err) {
      if (hasCode(err, 'FENCED')) this.hooks.fenced(err);
      else this.opts.log?.(`lease renewal failed: ${(err as Error).message}`);
    }
  }

  /** Re-reads the ref and fails FENCED if the lease is no longer ours at our epoch. */
  async fenceCheck(): Promise<VersionedRef> {
    const cur = await this.ctx.store.getRef(this.db, this.branch);
    if (cur.ref.lease_holder !== this.holder || cur.ref.epoch !== this.epoch) {
      throw fail(
        'FENCED',
        `session ${this.db}@${this.branch} was fenced: the lease is now held by ${cur.ref.lease_holder ?? 'nobody'} at epoch ${cur.ref.epoch} (ours: ${this.epoch})`,
        {
          hint: `close the session (offshoot session close ${this.db}@${this.branch}) and open it again`,
        },
      );
    }
    return cur;
  }

  /**
   * Runs one of the session's own writes of its ref after the others. Its renewals would otherwise race its flushes:
   * on a loaded machine a ref write outlasts the renewal interval, and a flush whose every compare-and-swap loses to
   * a renewal fails with CAS_CONFLICT against nobody but its own session.
   */
  writingRef<T>(write: () => Promise<T>): Promise<T> {
    const run = this.refWrites.then(write);
    this.refWrites = run.catch(() => undefined);
    return run;
  }

  /**
   * Advances the head (and records a checkpoint) by CAS, retrying only while nothing but a lease renewal moved. The
   * ref was read before the upload, so a renewal may have moved it since; the retry re-reads it under writingRef,
   * where no renewal of ours can move it again. With release, the same write gives the lease back (close's last
   * flush): the CAS is on a ref that still names our lease and epoch, so a fenced session moves nothing. Each
   * attempt's ref goes through `stamp` (the flush verb's log record, appended in the same CAS). Returns the ref
   * written.
   */
  record(
    cur: VersionedRef,
    txid: number,
    epoch: number,
    name: string | undefined,
    meta: Meta | undefined,
    stamp: LogStamp,
    release = false,
  ): Promise<Ref> {
    return this.writingRef(async () => {
      let vref = cur;
      const prevHead = cur.ref.head_txid;
      for (let attempt = 0; ; attempt++) {
        const now = new Date().toISOString();
        let next: Ref = {
          ...(release ? withoutLease(vref.ref) : vref.ref),
          head_txid: txid,
          head_epoch: epoch,
          touched_at: now,
          checkpoints: nameMap(vref.ref.checkpoints),
        };
        if (name !== undefined) next.checkpoints[name] = { txid, epoch, created_at: now, ...(meta ? { meta } : {}) };
        next = await stamp(vref.ref, next);
        try {
          await this.ctx.store.casRef(this.db, this.branch, vref.etag, next);
          return next;
        } catch (err) {
          if (!hasCode(err, 'CAS_CONFLICT') || attempt >= CAS_RETRIES) throw err;
          vref = await this.fenceCheck();
          if (vref.ref.head_txid !== prevHead || vref.ref.lineage !== cur.ref.lineage) {
            throw fail('FENCED', `${this.db}@${this.branch} moved under the session (head ${vref.ref.head_txid})`, {
              hint: 'close the session and open it again',
            });
          }
        }
      }
    });
  }
}
