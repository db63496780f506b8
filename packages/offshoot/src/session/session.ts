import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { breachOfClosed, ContractBreachError } from '../capture/journal-contract.js';
import { asOffshootError, fail, type OffshootError } from '../core/errors.js';
import { validateMeta, type Meta } from '../core/meta.js';
import { validateName } from '../core/names.js';
import type { Origin } from '../core/history.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import type { OpsContext } from '../ops/context.js';
import { flush, type LiveFlushed } from '../ops/flush.js';
import { releaseLease } from '../ops/lease.js';
import type { LiveBranch } from '../ops/live-branch.js';
import type { Actor } from '../ops/policy.js';
import { open } from '../ops/open.js';
import { type Fingerprint, type Sidecar, withdrawSidecar } from '../sqlite/checkout-sidecar.js';
import type { PageSums } from '../sqlite/page-sums.js';
import type { EventType, SessionInfo } from '../protocol/wire.js';
import type { VersionedRef } from '../store/store.js';
import { CapturedWrites } from './captured-writes.js';
import { LeaseKeeper } from './lease-keeper.js';
import {
  changedSince,
  type LiveCapture,
  markUnproven,
  startCapture,
  stopCapture,
  syncCheckout,
  type StoppedCapture,
} from './live-capture.js';
import { restampClean } from './restamp.js';
import { dropKept } from '../sqlite/kept-connection.js';
import { walBytes } from '../sqlite/wal-bytes.js';
import { makeSessionScratch } from './scratch-dir.js';
import type { SessionSink } from './session-sink.js';

/** How a session behaves; the daemon passes its flags through. */
export interface SessionOptions {
  leaseTtlMs?: number;
  renewEveryMs?: number;
  /**
   * The daemon's liveness object (its id) the session's lease stands on, and that lease's length (minutes): the
   * lease is renewed every third of it, and leaseTtlMs and renewEveryMs are the liveness object's business.
   */
  liveness?: { id: string; leaseMs: number };
  onEvent?: (type: EventType, detail: Record<string, unknown>) => void;
  log?: (m: string) => void;
  /**
   * Runs each lease renewal: a daemon with many sessions bounds how many run at once, so renewals that fall due
   * together never open more store files than it has room for.
   */
  renewal?: <T>(renew: () => Promise<T>) => Promise<T>;
  /** Who opens the session: the policy decides whether an agent may (a session is a writable checkout). */
  actor?: Actor;
}

/** What a flush is asked: its kind (the cadence's, or a caller's), who asks, and the checkpoint it names. */
export interface FlushRequest {
  kind: 'auto' | 'manual';
  name?: string;
  meta?: Meta;
  /** Who asks: the policy decides whether an agent may write into the branch. */
  actor?: Actor;
  /** Who asked for the branch log's record, when not the session's opener (whose automatic flushes it names). */
  origin?: Origin;
}

/** What one flush did, and how long it took. */
export interface FlushOutcome extends LiveFlushed {
  durationMs: number;
}

const DEFAULT_LEASE_TTL_MS = 30_000;
const DEFAULT_RENEW_MS = 10_000;

/** The session's own lease length: its daemon's long one when it stands on a liveness object. */
function leaseLength(opts: SessionOptions): number {
  return opts.liveness?.leaseMs ?? opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
}

/**
 * A live daemon session on one branch: it holds the branch lease (renewed; a fresh acquire bumped the epoch, which
 * fences every earlier writer), keeps the checkout under WAL capture, and flushes what changed as LTX under its
 * epoch. Durability is reported, not assumed: durableTxid is exactly what a restore reproduces.
 */
export class Session {
  private durable: number;
  private lastFlushAt: Date | undefined;
  private flushError: string | undefined;
  private terminal: OffshootError | undefined;
  private flushing: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** The lease, its renewals and the session's own (fenced) writes of its ref. */
  private readonly lease: LeaseKeeper;
  /** The checkout under capture; undefined while the session is evicted (or once it is closed). */
  private capture: LiveCapture | undefined;
  /** Captures started so far, each in a directory of its own under the scratch dir. */
  private captures = 0;
  /**
   * Set once evicted, when no connection of this process is left on the checkout: its fingerprint as capture left
   * it (undefined: nothing proven, reconnect to flush). Unset while capture runs, stops or starts.
   */
  private evictedAt: { fingerprint: Fingerprint | undefined } | undefined;
  /** The connection contract broken: what was captured is flushed, then every flush is refused with it. */
  private contract: ContractBreachError | undefined;
  private lastRequestAt = Date.now();
  /** Close's last flush stopped capture before writing the head: the stopped capture, to stamp once it is durable. */
  private stoppedForClose: { sink: SessionSink; stopped: StoppedCapture } | undefined;
  /** The ref close's last flush wrote: the head and the lease given back in one write (no release is left to do). */
  private leaseGivenWith: Ref | undefined;
  /** The checkout's copy on its way to the disk (open placed it unsynced, its -wal pinned meanwhile). */
  private onDisk: Promise<void> = Promise.resolve();

  private constructor(
    private readonly live: LiveBranch,
    private readonly scratch: string,
    private readonly opts: SessionOptions,
    epoch: number,
    durable: number,
  ) {
    this.durable = durable;
    const leaseMs = leaseLength(opts);
    this.lease = new LeaseKeeper(
      live.ctx,
      live.db,
      live.branch,
      epoch,
      {
        leaseMs,
        renewEveryMs: opts.liveness !== undefined ? Math.floor(leaseMs / 3) : (opts.renewEveryMs ?? DEFAULT_RENEW_MS),
        ...(opts.liveness !== undefined ? { liveness: opts.liveness.id } : {}),
        ...(opts.renewal !== undefined ? { renewal: opts.renewal } : {}),
        ...(opts.log !== undefined ? { log: opts.log } : {}),
      },
      { active: () => !this.terminal && !this.closed, fenced: (err) => this.fence(err) },
    );
  }

  /**
   * Opens the branch for live capture through the open verb (the lease, the policy for `opts.actor`, the checkout as
   * exactly the durable head) while the session's scratch is made, and starts capturing it.
   */
  static async open(ctx: OpsContext, t: Target, opts: SessionOptions): Promise<Session> {
    const [opening, scratching] = await Promise.allSettled([
      open(ctx, t, {
        leaseMs: leaseLength(opts),
        journalCheck: breachOfClosed,
        log: (m) => opts.log?.(m),
        ...(opts.actor !== undefined ? { actor: opts.actor } : {}),
        ...(opts.liveness !== undefined ? { liveness: opts.liveness.id } : {}),
      }),
      makeSessionScratch(ctx.checkoutRoot),
    ]);
    const scratch = scratching.status === 'fulfilled' ? scratching.value : undefined;
    if (opening.status === 'rejected') {
      if (scratch) await rm(scratch, { recursive: true, force: true });
      throw opening.reason;
    }
    const { live, ref, warnings, written, unsynced } = opening.value;
    // Settled beside everything else, and awaited before anything of the session's checkpoints the checkout.
    const onDisk = unsynced
      ?.settle()
      .catch((err: Error) => opts.log?.(`checkout of ${t.db}@${t.branch} not synced: ${err.message}`));
    try {
      if (scratching.status === 'rejected') throw scratching.reason;
      const s = new Session(live, scratch as string, opts, ref.epoch, ref.head_txid);
      if (onDisk !== undefined) s.onDisk = onDisk;
      await s.startCapture(ref, undefined, written);
      s.warnings = warnings;
      s.lease.start();
      opts.onEvent?.('session_opened', { holder: ctx.holder, epoch: ref.epoch });
      return s;
    } catch (err) {
      await onDisk;
      if (scratch) await rm(scratch, { recursive: true, force: true });
      await releaseLease(ctx, t).catch(() => undefined);
      throw err;
    }
  }

  /** Resolves once the checkout's main file is on the disk: at once, unless open placed its copy unsynced. */
  checkoutOnDisk(): Promise<void> {
    return this.onDisk;
  }

  // Capture's stop checkpoints the checkout: its copy goes to the disk first, which lets the -wal go (see open).
  private async stopCapturing(cap: LiveCapture, opts?: Parameters<typeof stopCapture>[2]): Promise<StoppedCapture> {
    await this.onDisk;
    return stopCapture(this.path, cap, opts);
  }

  /** The database of the branch the session holds. */
  get db(): string {
    return this.live.db;
  }

  /** The branch the session holds. */
  get branch(): string {
    return this.live.branch;
  }

  /** The checkout under capture. */
  get path(): string {
    return this.live.path;
  }

  /** What the caller of open must know: writes of an earlier session kept in an undo branch. */
  warnings: readonly string[] = [];

  /** The lease holder identity. */
  get holder(): string {
    return this.lease.holder;
  }

  /** The epoch every object of this session is written under. */
  get epoch(): number {
    return this.lease.epoch;
  }

  /** The txid durable in the store: exactly what a restore reproduces. */
  get durableTxid(): number {
    return this.durable;
  }

  /** True when captured writes are not yet durable. */
  get dirty(): boolean {
    return this.capture?.sink.dirty ?? false;
  }

  /**
   * The terminal error (FENCED, or the connection contract broken) that keeps this session from flushing until it
   * is closed.
   */
  get error(): OffshootError | undefined {
    return this.terminal ?? this.contract;
  }

  /** True while capture runs (or stopped on an error and still holds its descriptors until evicted or closed). */
  get capturing(): boolean {
    return this.capture !== undefined;
  }

  /** True while the session is evicted: its lease is held and renewed, its checkout has no descriptor open. */
  get evicted(): boolean {
    return this.evictedAt !== undefined;
  }

  /**
   * True when the session is evicted and its checkout may have changed since (O(1), stats only): a flush or a close
   * must reconnect it first, and a watcher of the checkout should.
   */
  get needsReconnect(): boolean {
    return this.evictedAt !== undefined && changedSince(this.path, this.evictedAt.fingerprint);
  }

  /** When the session last did something: a request, or a transaction captured. Eviction picks the oldest. */
  get lastActivity(): number {
    return Math.max(this.lastRequestAt, this.capture?.engine.lastCaptureAt ?? 0);
  }

  /** Records a request of the session's holder, for lastActivity. */
  touch(): void {
    this.lastRequestAt = Date.now();
  }

  /** The session as the wire protocol's status op reports it. */
  info(): SessionInfo {
    const info: SessionInfo = {
      db: this.db,
      branch: this.branch,
      checkout: this.path,
      holder: this.holder,
      epoch: this.lease.epoch,
      durable_txid: this.durable,
      // Evicted: whatever the -wal holds was committed since capture let go.
      capture_lag_bytes: this.capture?.engine.lag() ?? walBytes(this.path),
      unflushed_bytes: this.capture?.sink.pendingBytes ?? 0,
    };
    if (this.evicted) info.evicted = true;
    if (this.lastFlushAt) {
      info.last_flush_at = this.lastFlushAt.toISOString();
      info.durable_age = `${Math.round((Date.now() - this.lastFlushAt.getTime()) / 1000)}s`;
    }
    if (this.flushError) info.flush_error = this.flushError;
    const error = this.error;
    if (error) info.error = error.message;
    return info;
  }

  /** Seconds since the last successful flush (or since open). */
  durableAgeSeconds(): number {
    return this.lastFlushAt ? (Date.now() - this.lastFlushAt.getTime()) / 1000 : 0;
  }

  /**
   * Makes everything committed to SQLite before the call durable: drains the WAL, re-checks the lease, and hands what
   * was captured to the flush verb, which (as the policy lets `actor`) writes a segment of the changed pages (a
   * snapshot on the cadence or after a rebase) under the session epoch and advances the ref by the session's
   * compare-and-swap, recording the checkpoint name if given. Flushes are serialized.
   */
  flush(opts: FlushRequest): Promise<FlushOutcome> {
    return this.queueFlush(opts, false);
  }

  // keepCaptured: the flush after the contract broke, of what was captured before (the -wal is not read again).
  // last: close's flush, which stops capture once the -wal is drained and gives the lease back with the head.
  private queueFlush(opts: FlushRequest, keepCaptured: boolean, last = false): Promise<FlushOutcome> {
    const run = this.flushing.then(() => this.flushOnce(opts, keepCaptured, last));
    this.flushing = run.then(
      () => undefined,
      () => undefined,
    );
    // A merge starts once the flush has answered and runs beside the next flushes: a flush costs its own pages.
    void run.then(
      () => this.mergeBehind(),
      () => undefined,
    );
    return run;
  }

  /** Resolves once the background merge in flight, if any, has landed (or failed, which costs a longer chain). */
  merged(): Promise<void> {
    return this.live.chain.merged();
  }

  /** Starts the background merge of the chain once it has outgrown its soft bound; never throws. */
  private mergeBehind(): void {
    if (this.terminal || this.closed) return;
    this.live.chain.mergeBehind(
      () => this.lease.epoch,
      () => this.terminal !== undefined,
    );
  }

  private async flushOnce(opts: FlushRequest, keepCaptured: boolean, last: boolean): Promise<FlushOutcome> {
    const started = Date.now();
    if (opts.name !== undefined) validateName('checkpoint', opts.name);
    if (opts.meta !== undefined && opts.name === undefined)
      throw fail('INVALID_ARGUMENT', 'flush meta needs a checkpoint name', {
        hint: 'pass a checkpoint name with the meta',
      });
    validateMeta(opts.meta);
    if (this.terminal) throw this.terminal;
    if (this.contract && !keepCaptured) throw this.contract;
    const cap = this.capture;
    if (cap === undefined && this.needsReconnect)
      throw fail('INTERNAL', `session ${this.db}@${this.branch} is evicted and its checkout changed`, {
        hint: 'reconnect the session before flushing it',
      });
    try {
      if (!keepCaptured) await cap?.engine.drainNow();
      const stopped = last && cap?.sink.dirty && !this.error ? await this.stopForClose(cap) : false;
      const cur = await this.lease.fenceCheck();
      const written = await this.writeFlush(cur, cap, opts, stopped);
      const outcome: FlushOutcome = { ...written, durationMs: Date.now() - started };
      this.flushError = undefined;
      this.lastFlushAt = new Date();
      if (outcome.kind !== 'none')
        this.opts.onEvent?.('flushed', {
          kind: opts.kind,
          txid: outcome.txid,
          duration_seconds: outcome.durationMs / 1000,
        });
      return outcome;
    } catch (err) {
      const e = asOffshootError(err);
      if (e.code === 'FENCED') this.fence(e);
      else if (opts.kind === 'auto') this.flushError = e.message;
      this.opts.onEvent?.('flush_failed', {
        kind: opts.kind,
        error: e.message,
        duration_seconds: (Date.now() - started) / 1000,
      });
      throw e;
    }
  }

  /**
   * Hands the flush verb what was captured (nothing when capture is evicted or clean) and the session's own side of
   * the write: its epoch and its fenced compare-and-swap, which with `release` (close's last flush) gives the lease
   * back in the same write. A head written becomes the durable txid.
   */
  private async writeFlush(
    cur: VersionedRef,
    cap: LiveCapture | undefined,
    opts: FlushRequest,
    release: boolean,
  ): Promise<LiveFlushed> {
    const source = cap === undefined ? undefined : new CapturedWrites(cap.sink, this.scratch);
    const written = await flush(
      this.live,
      cur,
      source,
      {
        epoch: () => this.lease.epoch,
        record: async (up, txid, epoch, name, meta, stamp) => {
          const ref = await this.lease.record(up, txid, epoch, name, meta, stamp, release);
          if (release) this.leaseGivenWith = ref;
          return ref;
        },
        hooks: {
          // An orphan of a crashed attempt at our epoch moves the upload to a fresh epoch we still own.
          onEpoch: (epoch) => {
            this.lease.epoch = epoch;
          },
          serialize: (write) => this.lease.writingRef(write),
        },
      },
      {
        ...(opts.actor !== undefined ? { actor: opts.actor } : {}),
        ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.meta !== undefined ? { meta: opts.meta } : {}),
      },
    );
    if (written.kind !== 'none') this.durable = written.txid;
    return written;
  }

  /**
   * Renews the lease now, out of turn: its daemon's liveness lapsed, so anyone may have taken the branch meanwhile,
   * and a lease found taken fences the session (the `fenced` event) before its next flush would.
   */
  renewLease(): Promise<void> {
    return this.lease.renew();
  }

  private fence(err: OffshootError): void {
    if (this.terminal) return;
    this.terminal = err;
    this.opts.onEvent?.('fenced', { cause: err.message });
    void this.capture?.engine.stop();
  }

  /**
   * The checkout left WAL mode (another connection set journal_mode, or a rollback journal appeared): its writes
   * from then on cannot be captured. The session announces it, flushes what it had captured before, and from then
   * on refuses flushes with the typed error; its checkout is never stamped clean again, so it reads dirty once the
   * session is closed, and the next open keeps its content as an undo branch.
   */
  private breakContract(err: ContractBreachError): void {
    if (this.contract || this.terminal || this.closed) return;
    this.contract = err;
    this.opts.onEvent?.('contract_broken', { kind: err.breach.kind, error: err.message });
    this.queueFlush({ kind: 'auto' }, true).catch((e: unknown) =>
      this.opts.log?.(`what was captured before the journal mode changed is not flushed: ${(e as Error).message}`),
    );
  }

  private onCaptureFailure(err: OffshootError): void {
    if (err instanceof ContractBreachError) this.breakContract(err);
  }

  // since: the fingerprint an eviction left the checkout with, which proves it untouched (see startCapture);
  // written: the checkout open just placed, whose sidecars need no reading back.
  private async startCapture(
    ref: Ref,
    since?: Fingerprint,
    written?: { sidecar: Sidecar; sums: PageSums },
  ): Promise<LiveCapture> {
    this.captures++;
    this.capture = await startCapture(this.path, ref, {
      dir: join(this.scratch, `capture-${this.captures}`),
      log: this.opts.log ?? (() => undefined),
      onFailure: (err) => this.onCaptureFailure(err),
      ...(since !== undefined ? { since } : {}),
      ...(written !== undefined ? { written } : {}),
      ...(this.live.ephemeral() ? { unsynced: true } : {}),
    });
    return this.capture;
  }

  /**
   * Puts the checkout on the disk and has capture sync it from now on: the branch was ephemeral and is kept.
   */
  syncCheckout(): Promise<void> {
    return syncCheckout(this.path, this.capture);
  }

  /**
   * Closes every descriptor the session holds on its checkout, keeping its lease (renewed as before) and everything
   * durable: what was captured is flushed first, capture stops proving it saw every commit, and the checkout is
   * stamped as the durable head, so reconnecting an untouched checkout
   * costs no read of it. A foreign writer may commit meanwhile; reconnect() captures whatever it finds. False (and
   * still connected) when the session cannot be evicted now: closed, or its flush failed.
   */
  async evict(): Promise<boolean> {
    const cap = this.capture;
    if (cap === undefined || this.closed) return false;
    if (this.error) {
      // Nothing more will be captured or flushed: only the descriptors are left to give back.
      this.capture = undefined;
      await this.stopCapturing(cap);
      markUnproven(this.path);
      await rm(cap.dir, { recursive: true, force: true });
      this.evictedAt = { fingerprint: undefined };
      return true;
    }
    // A flush drains the -wal first: everything committed so far is captured and durable before capture stops.
    try {
      await this.flush({ kind: 'auto' });
    } catch {
      return false;
    }
    if (this.capture !== cap || this.closed || this.error) return false;
    this.capture = undefined;
    const stopped = await this.stopCapturing(cap);
    // Stamped even when the sidecars already name the head: capture's stop never leaves the mtime they record.
    const fingerprint = stopped.fingerprint === undefined ? undefined : await this.stamp(cap.sink, stopped.fingerprint);
    // The re-stamp's connection is not kept for the next reader: an evicted session holds nothing on its checkout.
    dropKept(this.path);
    await rm(cap.dir, { recursive: true, force: true });
    this.evictedAt = { fingerprint };
    this.opts.onEvent?.('session_evicted', { stamped: fingerprint !== undefined });
    return true;
  }

  /**
   * Restarts capture of an evicted session: at once when its checkout is untouched, else from a rescan compared with
   * the durable head (every commit made meanwhile is captured). A checkout that left WAL mode meanwhile breaks the
   * connection contract and fails with its typed error.
   */
  async reconnect(): Promise<void> {
    const evicted = this.evictedAt;
    if (evicted === undefined || this.closed) return;
    const e = this.error;
    if (e) throw e;
    const breach = breachOfClosed(this.path);
    if (breach !== undefined) {
      const err = new ContractBreachError(breach, this.path);
      this.breakContract(err);
      throw err;
    }
    // From here connections open on the checkout: nothing may open and close a descriptor of its own on it.
    this.evictedAt = undefined;
    let cap: LiveCapture;
    try {
      const cur = await this.lease.fenceCheck();
      cap = await this.startCapture(cur.ref, evicted.fingerprint);
    } catch (err) {
      this.evictedAt = evicted;
      throw err;
    }
    this.opts.onEvent?.('session_reconnected', { resumed: cap.engine.resumed });
  }

  /**
   * Checks an evicted checkout for a broken contract without reconnecting (a watcher saw it change): true and the
   * typed error recorded when it left WAL mode.
   */
  checkEvictedContract(): boolean {
    if (this.evictedAt === undefined || this.closed || this.error) return false;
    const breach = breachOfClosed(this.path);
    if (breach === undefined) return false;
    this.breakContract(new ContractBreachError(breach, this.path));
    return true;
  }

  /**
   * Stops capture for close's last flush, once the -wal is drained: nothing more is captured, so the flush that
   * follows can give the lease back in its ref write (no writer of ours is left to move the head after it). The
   * sidecar is withdrawn durably first: capture's stop backdates the checkout, which could then match a sidecar
   * stamped in the same second as the head before this flush, and a crash before the flush would leave the unflushed
   * writes passing for that head; without a sidecar the next open compares the file with the head and keeps them.
   * The withdrawal (an unlink and its directory's fsync) runs beside capture's drain and checkpoint, which need no
   * sidecar gone, and the stop awaits it before it backdates: never later than the step it guards.
   */
  private async stopForClose(cap: LiveCapture): Promise<true> {
    this.closed = true;
    this.lease.stop();
    await this.merged();
    // An ephemeral fork's checkout is gone with its daemon: a crash leaves nothing to read, so nothing to guard.
    const withdrawn = withdrawSidecar(this.path, { durable: !this.live.ephemeral() });
    // Handled here and awaited below: a failure must not surface as an unhandled rejection meanwhile.
    withdrawn.catch(() => undefined);
    this.capture = undefined;
    this.stoppedForClose = {
      sink: cap.sink,
      stopped: await this.stopCapturing(cap, { beforeBackdate: withdrawn, keep: true }),
    };
    await withdrawn;
    return true;
  }

  // Stamps the checkout as the durable head when capture left it settled and the head is our last flush; returns
  // the fingerprint stamped, or undefined when it could not.
  private async stamp(sink: SessionSink, stopped: Fingerprint): Promise<Fingerprint | undefined> {
    const cur = await this.live.ctx.store.getRef(this.db, this.branch).catch(() => undefined);
    if (!cur || cur.ref.head_txid !== this.durable || cur.ref.lease_holder !== this.holder) return undefined;
    return restampClean(this.live.ctx, this.path, cur.ref, sink, stopped).catch((err: unknown) => {
      this.opts.log?.(`checkout not re-stamped: ${(err as Error).message}`);
      return undefined;
    });
  }

  /**
   * Stamps the checkout as the head close's last flush wrote, after that write gave the lease back. No lease is
   * needed for it: the stamp names that flush's own identity (its lineage, epoch and txid, which no other writer
   * ever writes) and the fingerprint capture left the file with once it had captured exactly what was flushed,
   * re-checked under a frozen checkout; whoever holds the branch next, the stamp is true of that file, and any later
   * write or re-materialization changes the fingerprint. Returns the fingerprint stamped, or undefined.
   */
  private stampGiven(ref: Ref, sink: SessionSink, stopped: Fingerprint): Promise<Fingerprint | undefined> {
    return restampClean(this.live.ctx, this.path, ref, sink, stopped).catch((err: unknown) => {
      this.opts.log?.(`checkout not re-stamped: ${(err as Error).message}`);
      return undefined;
    });
  }

  /**
   * Flushes pending writes (an evicted session whose checkout changed reconnects first), stops capture, re-stamps a
   * provably clean checkout, and releases the lease: when there was something to flush, capture stops first and the
   * flush's ref write gives the lease back with the head.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    let failure: OffshootError | undefined = this.terminal;
    if (!failure) {
      try {
        if (this.needsReconnect) await this.reconnect();
        await this.queueFlush({ kind: 'manual' }, false, true);
      } catch (err) {
        failure = asOffshootError(err);
      }
    }
    await this.shutdown(failure === undefined);
    this.opts.onEvent?.('session_closed', failure ? { error: failure.message } : {});
    if (failure && !this.terminal) throw failure;
  }

  /** Stops capture and releases the lease without flushing (after a terminal error, or at a forced shutdown). */
  async abandon(): Promise<void> {
    if (this.closed) return;
    await this.shutdown(false);
    this.opts.onEvent?.('session_closed', this.terminal ? { error: this.terminal.message } : {});
  }

  private async shutdown(mayRestamp: boolean): Promise<void> {
    this.closed = true;
    this.lease.stop();
    await this.flushing;
    await this.merged();
    const cap = this.capture;
    this.capture = undefined;
    this.evictedAt = undefined;
    const given = this.leaseGivenWith;
    if (cap !== undefined) {
      // Every descriptor on the checkout goes with the capture, or with the connection the process keeps for the
      // checkout's next reader (see keepConnections): a closed session leaves none of its own behind.
      const stopped = await this.stopCapturing(cap, { keep: mayRestamp });
      const stamped =
        mayRestamp && stopped.fingerprint !== undefined && !this.error
          ? await this.stamp(cap.sink, stopped.fingerprint)
          : undefined;
      // Capture's stop moved the mtime back whatever the checkout holds: one not stamped as the head must not match
      // the sidecars it had when the session opened (a session opened and closed within a second, its last flush
      // failed), so it is marked written, and the next open compares it with the head.
      if (stamped === undefined) markUnproven(this.path);
    } else if (this.stoppedForClose !== undefined) {
      const { sink, stopped } = this.stoppedForClose;
      const fp = stopped.proven;
      const stamped =
        mayRestamp && given !== undefined && fp !== undefined && !sink.dirty && !this.error
          ? await this.stampGiven(given, sink, fp)
          : undefined;
      if (stamped === undefined) markUnproven(this.path);
    }
    if (given === undefined)
      await this.lease.writingRef(async () => {
        const cur = await this.live.ctx.store.tryGetRef(this.db, this.branch).catch(() => undefined);
        if (cur && cur.ref.lease_holder === this.holder && cur.ref.epoch === this.lease.epoch) {
          await releaseLease(this.live.ctx, { db: this.db, branch: this.branch }).catch(() => undefined);
        }
      });
    // A few small files in a private directory: removed in place rather than one thread-pool trip per entry.
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
