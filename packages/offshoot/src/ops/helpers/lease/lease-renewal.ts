import { fail, hasCode, type OffshootError } from '../../../core/errors.js';
import { refKey } from '../../../core/keys.js';
import { serializeRef, type Ref } from '../../../core/ref.js';
import type { RefWriteGuard } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';

/** A renewal runs every this fraction of the lease, as a session's does (30 s lease, renewed every 10 s). */
const RENEWALS_PER_LEASE = 3;

/**
 * Keeps an at-rest command's branch lease alive while the command runs: every third of the lease it extends the
 * expiry by compare-and-swap on the ref, changing nothing else. It guards the ref's writes in this process
 * (Store.guardRef), so the command's own compare-and-swaps, which name the etag the command read, still land after a
 * renewal replaced it (the renewal changed only the expiry, which the write keeps), and never race a renewal. A
 * renewal that finds the ref written by anyone else marks the lease lost: from then on every write of the ref
 * through this store fails LEASE_LOST before it reaches the store, so a command overtaken while it ran never moves
 * the branch.
 */
export class LeaseRenewal implements RefWriteGuard {
  private etag: string;
  private ref: Ref;
  /** Etags only our renewals replaced: the ref they named differs from the stored one in its expiry alone. */
  private readonly superseded = new Set<string>();
  /** Every expiry this lease has written: a write that carries one of them has not set an expiry of its own. */
  private readonly expiries = new Set<string>();
  private lost: OffshootError | undefined;
  private done = false;
  private wrote = false;
  private gone = false;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly unguard: () => void;

  /** Starts renewing the lease just taken: etag and ref are what the taking compare-and-swap wrote. */
  constructor(
    private readonly ctx: OpsContext,
    private readonly db: string,
    private readonly branch: string,
    etag: string,
    ref: Ref,
  ) {
    this.etag = etag;
    this.ref = ref;
    if (ref.lease_expiry !== undefined) this.expiries.add(ref.lease_expiry);
    this.unguard = ctx.store.guardRef(db, branch, this);
    this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(ctx.leaseTtlMs / RENEWALS_PER_LEASE)));
    this.timer.unref();
  }

  /** The etag of the ref as this process last wrote it. */
  get currentEtag(): string {
    return this.etag;
  }

  /** The ref as this process last wrote it while holding the lease (the stored generation included). */
  get currentRef(): Ref {
    return this.ref;
  }

  /** True once anything but a renewal wrote the ref through this store. */
  get written(): boolean {
    return this.wrote;
  }

  /** True once a write through this guard deleted the ref: no lease is left to give back. */
  get removed(): boolean {
    return this.gone;
  }

  /** Extends the expiry once, unless the lease is lost or given up. */
  private renew(): Promise<void> {
    return this.exclusive(async () => {
      if (this.done || this.lost !== undefined) return;
      const next: Ref = {
        ...this.ref,
        lease_expiry: new Date(this.ctx.now().getTime() + this.ctx.leaseTtlMs).toISOString(),
      };
      try {
        const etag = await this.ctx.store.backend.put(refKey(this.db, this.branch), serializeRef(next), {
          ifMatch: this.etag,
        });
        this.superseded.add(this.etag);
        this.expiries.add(next.lease_expiry ?? '');
        this.etag = etag;
        this.ref = { ...next, generation: (next.generation ?? 0) + 1 };
      } catch (err) {
        if (hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'NOT_FOUND')) this.lose(await this.holderNow());
        else this.ctx.warn(`${this.db}@${this.branch}: lease renewal failed (retried): ${(err as Error).message}`);
      }
    });
  }

  /**
   * Runs one write of the ref (see RefWriteGuard). Once the lease is lost only a write that installs another
   * holder's lease passes (that holder taking the branch, in this process); one that installs another holder's lease
   * over ours marks ours lost.
   */
  write<T>(etag: string, ref: Ref | undefined, put: (etag: string, ref: Ref | undefined) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      const other = ref?.lease_holder !== undefined && ref.lease_holder !== this.ctx.holder;
      if (this.lost !== undefined && !other) throw this.lost;
      if (this.done || other) {
        const result = await put(etag, ref);
        if (other && !this.done) this.lose(ref.lease_holder);
        return result;
      }
      const named = this.superseded.has(etag) ? this.etag : etag;
      let next = ref;
      if (ref !== undefined && named === this.etag) {
        // What is stored is this.ref: carry its generation and, where the write kept our lease as it read it, the
        // latest expiry.
        next = { ...ref, generation: this.ref.generation ?? 0 };
        const kept = ref.lease_holder === this.ctx.holder && this.expiries.has(ref.lease_expiry ?? '');
        if (kept && this.ref.lease_expiry !== undefined) next.lease_expiry = this.ref.lease_expiry;
      }
      const result = await put(named, next);
      this.wrote = true;
      if (next === undefined) this.gone = true;
      this.superseded.clear();
      if (next?.lease_holder === this.ctx.holder && typeof result === 'string') {
        this.etag = result;
        this.ref = { ...next, generation: (next.generation ?? 0) + 1 };
      } else {
        this.done = true;
      }
      return result;
    });
  }

  /** Stops renewing and removes the guard; waits for a renewal in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.exclusive(async () => {
      this.done = true;
    });
    this.unguard();
  }

  private async holderNow(): Promise<string | undefined> {
    try {
      return (await this.ctx.store.tryGetRef(this.db, this.branch))?.ref.lease_holder;
    } catch {
      return undefined;
    }
  }

  private lose(holder: string | undefined): void {
    this.lost = fail(
      'LEASE_LOST',
      `${this.db}@${this.branch}: the command lost its branch lease while it ran (the branch is now leased by ${holder ?? 'nobody'}); the branch was not moved`,
      {
        hint: 'retry the command once that holder is done; if its lease keeps expiring mid-command, check that this machine is not starved or suspended and that the clocks agree',
      },
    );
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
