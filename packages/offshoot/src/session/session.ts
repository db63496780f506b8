import { named, nameMap } from '../core/name-map.js';
import { existsSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { breachOfClosed, ContractBreachError } from '../capture/journal-contract.js';
import { asOffshootError, fail, hasCode, type OffshootError } from '../core/errors.js';
import type { DataObject } from '../core/keys.js';
import { validateMeta, type Meta } from '../core/meta.js';
import { validateName } from '../core/names.js';
import { type Ref, withoutLease } from '../core/ref.js';
import { formatTarget, type Target } from '../core/target.js';
import { checkout } from '../ops/checkout.js';
import {
  discardStaged,
  installCheckout,
  type StagedCheckout,
  stageCheckout,
} from '../ops/helpers/checkout/install-checkout.js';
import {
  chainBound,
  type Compaction,
  compactChain,
  headKind,
  type HeadWritten,
  roomForHead,
  softBound,
  writeHead,
} from '../ops/helpers/chain/chain-writer.js';
import { type OpsContext, withOrigin } from '../ops/helpers/context/context.js';
import { logged } from '../ops/helpers/history/record.js';
import type { Origin } from '../core/history.js';
import { keepDivergedCheckout } from '../ops/helpers/safety/keep-diverged.js';
import { checkoutPath } from '../ops/helpers/context/paths.js';
import { SAFETY_FORK_TTL } from '../ops/helpers/safety/safety-fork.js';
import { releaseLease, takeLease } from '../ops/lease.js';
import { processSpace } from '../platform/process-space.js';
import { cachedChain } from '../ops/helpers/chain/materialize.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { type Fingerprint, withdrawSidecar } from '../sqlite/checkout-sidecar.js';
import type { VersionedRef } from '../store/store.js';
import { quiesce } from '../sqlite/quiesce.js';
import type { EventType, SessionInfo } from '../protocol/wire.js';
import { resetJournalMode } from './journal-mode-reset.js';
import { restampClean } from './restamp.js';
import { makeSessionScratch } from './scratch-dir.js';
import {
  changedSince,
  type LiveCapture,
  markUnproven,
  startCapture,
  stopCapture,
  syncCheckout,
  type StoppedCapture,
  walBytes,
} from './live-capture.js';
import type { SessionSink } from './session-sink.js';
import { writeSegment, writeSnapshot } from './segment-file.js';

/**
 * Keeps whatever the checkout holds beyond the branch head (writes a killed daemon captured but never flushed, or
 * at-rest edits never checkpointed) as an undo branch, then re-materializes the head, so the checkout the session
 * opens is exactly the durable head and nothing is discarded. `ref` is the one the session's lease was written in:
 * its head cannot move while the lease is ours. Returns the warnings for the caller.
 */
async function keepUnflushed(ctx: OpsContext, t: Target, ref: Ref): Promise<string[]> {
  const kept = await keepDivergedCheckout(ctx, t, ref);
  if (kept === undefined) return [];
  quiesce(checkoutPath(ctx.checkoutRoot, t.db, t.branch));
  await installCheckout(ctx, t.db, t.branch, ref);
  const name = formatTarget(t);
  const message =
    `the checkout of ${name} held writes that were never made durable (a daemon stopped before flushing them, or edits never checkpointed); ` +
    `they are kept as ${t.db}@${kept.branch} (checkpoint "unflushed", txid ${kept.txid}, TTL ${SAFETY_FORK_TTL}) and the session starts from the durable head (txid ${ref.head_txid}); ` +
    `to take them, close the session and run 'offshoot promote ${t.db}@${kept.branch} --onto ${t.branch}${ref.protected ? ' --force' : ''}'`;
  ctx.warn(message);
  return [message];
}

/**
 * The branch head staged privately beside a checkout path that holds no file (a fresh fork's), or undefined: staged
 * while the session's lease is written, it touches nothing anyone else may use, and it is placed only once the lease
 * is durable and only if it is still of the head. A branch someone leases is not staged for (the lease would be
 * refused), and a failure here is met again, and reported, by the install that then runs in its stead.
 */
async function stageIfAbsent(ctx: OpsContext, t: Target): Promise<StagedCheckout | undefined> {
  try {
    if (existsSync(checkoutPath(ctx.checkoutRoot, t.db, t.branch))) return undefined;
    const { ref } = await ctx.store.getRef(t.db, t.branch);
    if (ref.lease_holder !== undefined || ref.deleting || ref.reaping) return undefined;
    return await stageCheckout(ctx, t.db, t.branch, ref);
  } catch {
    return undefined;
  }
}

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
}

/** How a flush is asked for: a checkpoint name and its meta, automatic or not, and who asked when not the opener. */
export interface FlushRequest {
  name?: string;
  meta?: Meta;
  kind: 'auto' | 'manual';
  origin?: Origin;
}

/** What one flush did. */
export interface FlushOutcome {
  txid: number;
  kind: 'segment' | 'snapshot' | 'none';
  durationMs: number;
  /** Bytes of the head object the flush wrote. */
  bytes?: number;
  /** Pages the flush changed. */
  pages?: number;
  /** Bytes of the merge the flush had to write inline first, its chain being at the hard bound (rare). */
  mergedBytes?: number;
}

const DEFAULT_LEASE_TTL_MS = 30_000;
const DEFAULT_RENEW_MS = 10_000;
const CAS_RETRIES = 8;

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
  private epochValue: number;
  private durable: number;
  private lastFlushAt: Date | undefined;
  private flushError: string | undefined;
  private terminal: OffshootError | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<unknown> = Promise.resolve();
  /** The session's own writes of its ref (renewal, head advance, epoch bump, release), one at a time. */
  private refWrites: Promise<unknown> = Promise.resolve();
  private renewing = false;
  private closed = false;
  private chain: { lineage: string; head: number; members: DataObject[] } | undefined;
  private merging: Promise<void> | undefined;
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

  private constructor(
    private readonly ctx: OpsContext,
    readonly db: string,
    readonly branch: string,
    readonly path: string,
    private readonly scratch: string,
    private readonly opts: SessionOptions,
    epoch: number,
    durable: number,
  ) {
    this.epochValue = epoch;
    this.durable = durable;
  }

  /**
   * Leases the branch, checks it out (reusing a clean checkout) and starts capturing it. While the lease is written,
   * the session's scratch is made and a fresh fork's checkout staged (see stageIfAbsent); nothing of it is handed out
   * before the lease is durable.
   */
  static async open(ctx: OpsContext, t: Target, opts: SessionOptions): Promise<Session> {
    const leaseMs = leaseLength(opts);
    const [leased, staging, scratching] = await Promise.allSettled([
      takeLease(ctx, t, `${leaseMs}ms`, {
        space: processSpace(),
        ...(opts.liveness !== undefined ? { liveness: opts.liveness.id } : {}),
      }),
      stageIfAbsent(ctx, t),
      makeSessionScratch(ctx.checkoutRoot),
    ]);
    const staged = staging.status === 'fulfilled' ? staging.value : undefined;
    const scratch = scratching.status === 'fulfilled' ? scratching.value : undefined;
    if (leased.status === 'rejected') {
      await discardStaged(staged);
      if (scratch) await rm(scratch, { recursive: true, force: true });
      throw leased.reason;
    }
    const { ref } = leased.value;
    try {
      if (scratching.status === 'rejected') throw scratching.reason;
      const warnings = [...(await resetJournalMode(ctx, t, ref)), ...(await keepUnflushed(ctx, t, ref))];
      const co = await checkout(ctx, t, { leased: ref, ...(staged ? { staged } : {}) });
      await discardStaged(staged);
      const s = new Session(ctx, t.db, t.branch, co.path, scratch as string, opts, ref.epoch, ref.head_txid);
      await s.startCapture(ref, undefined, staged?.placed ? staged : undefined);
      s.warnings = warnings;
      const every = opts.liveness !== undefined ? Math.floor(leaseMs / 3) : (opts.renewEveryMs ?? DEFAULT_RENEW_MS);
      s.renewTimer = setInterval(() => void s.renew(), Math.max(1, every));
      s.renewTimer.unref();
      opts.onEvent?.('session_opened', { holder: ctx.holder, epoch: ref.epoch });
      return s;
    } catch (err) {
      await discardStaged(staged);
      if (scratch) await rm(scratch, { recursive: true, force: true });
      await releaseLease(ctx, t).catch(() => undefined);
      throw err;
    }
  }

  /** What the caller of open must know: writes of an earlier session kept in an undo branch. */
  warnings: readonly string[] = [];

  /** The lease holder identity. */
  get holder(): string {
    return this.ctx.holder;
  }

  /** The epoch every object of this session is written under. */
  get epoch(): number {
    return this.epochValue;
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
      epoch: this.epochValue,
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
   * Makes everything committed to SQLite before the call durable: drains the WAL, re-checks the lease, writes a
   * segment of the changed pages (a snapshot on the cadence or after a rebase) under the session epoch and advances
   * the ref by compare-and-swap, recording the checkpoint name if given. Flushes are serialized.
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
  async merged(): Promise<void> {
    while (this.merging) await this.merging;
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
      const cur = await this.fenceCheck();
      if (opts.name !== undefined && named(cur.ref.checkpoints, opts.name)) {
        throw fail('ALREADY_EXISTS', `checkpoint "${opts.name}" already exists on ${this.db}@${this.branch}`, {
          hint: 'pick another checkpoint name',
        });
      }
      let outcome: FlushOutcome;
      if (cap === undefined || !cap.sink.dirty) {
        if (opts.name !== undefined)
          await this.record(cur, cur.ref.head_txid, cur.ref.head_epoch, opts.name, opts.meta, false, {
            ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
          });
        outcome = { txid: cur.ref.head_txid, kind: 'none', durationMs: Date.now() - started };
      } else {
        outcome = await this.writeFlush(cap.sink, cur, opts, started, stopped);
      }
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

  private async writeFlush(
    sink: SessionSink,
    cur: VersionedRef,
    opts: FlushRequest,
    started: number,
    release: boolean,
  ): Promise<FlushOutcome> {
    const { name, meta } = opts;
    const batch = sink.take();
    try {
      const txid = cur.ref.head_txid + 1;
      const snapshot = headKind(batch.pages.length, batch.commit, batch.forceSnapshot) === 'snapshot';
      const out = join(this.scratch, `flush-${txid}.ltx`);
      let head: HeadWritten;
      let bytes: number;
      let mergedBytes: number | undefined;
      try {
        if (snapshot) {
          const base =
            batch.rebaseImage ??
            (
              await cachedChain(
                this.ctx,
                this.db,
                await new ChainResolver(this.ctx.store, { sizes: false }).resolve(cur.ref.lineage, cur.ref.head_txid),
              )
            ).path;
          bytes = await writeSnapshot(batch, base, join(this.scratch, 'snapshot-work.db'), txid, out, Date.now());
        } else {
          bytes = await writeSegment(batch, txid, out, Date.now());
        }
        const room = snapshot ? { members: [] } : await this.roomAt(cur.ref);
        const prior = room.members;
        mergedBytes = room.merged?.bytes;
        head = await writeHead(
          this.ctx,
          this.db,
          this.branch,
          cur,
          { kind: snapshot ? 'snapshot' : 'segment', txid, file: out },
          async (up) => {
            const written = await this.record(up, txid, this.epochValue, name, meta, release, {
              pages: batch.pages.length,
              bytes,
              ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
            });
            if (release) this.leaseGivenWith = written;
            return up;
          },
          // An orphan of a crashed attempt at our epoch moves the upload to a fresh epoch we still own.
          {
            onEpoch: (epoch) => {
              this.epochValue = epoch;
            },
            serialize: (write) => this.writingRef(write),
          },
        );
        // A background merge may have landed while the head was written: build on its chain, not on `prior`.
        const c = this.chain;
        const below = c && c.lineage === cur.ref.lineage && c.head === cur.ref.head_txid ? c.members : prior;
        this.chain = {
          lineage: cur.ref.lineage,
          head: txid,
          members: snapshot ? [head.object] : [...below, head.object],
        };
      } finally {
        // Synchronous: two unlinks in the session's private scratch cost less than their trips to the thread pool.
        rmSync(out, { force: true });
        rmSync(join(this.scratch, 'snapshot-work.db'), { force: true });
      }
      await sink.committed(batch);
      this.durable = txid;
      return {
        txid,
        kind: snapshot ? 'snapshot' : 'segment',
        durationMs: Date.now() - started,
        bytes,
        pages: batch.pages.length,
        ...(mergedBytes !== undefined ? { mergedBytes } : {}),
      };
    } catch (err) {
      sink.restore(batch);
      throw err;
    }
  }

  /**
   * The chain at the ref's head: resolved from the store once, then carried forward by this session's own flushes
   * and merges (nobody else writes the lineage while the lease is ours), so a flush costs no listing of the lineage.
   */
  private async chainAt(ref: Ref): Promise<DataObject[]> {
    if (this.chain && this.chain.lineage === ref.lineage && this.chain.head === ref.head_txid)
      return this.chain.members;
    // By key alone: the flushes and merges that carry it forward need its members' keys and spans, not their sizes.
    const chain = await new ChainResolver(this.ctx.store, { sizes: false }).resolve(ref.lineage, ref.head_txid);
    this.chain = { lineage: ref.lineage, head: ref.head_txid, members: chain.members };
    return chain.members;
  }

  /**
   * The chain a segment lands on: as it is below the hard bound; at the bound (background merges fell behind) the
   * merge in flight is awaited and, if the chain is still at the bound, merged inline. A failed merge costs a longer
   * chain, never the flush: the chain is re-resolved from the store (an object it named may have been collected).
   */
  private async roomAt(ref: Ref): Promise<Compaction> {
    let members = await this.chainAt(ref);
    if (members.length < chainBound(this.ctx)) return { members };
    if (this.merging) {
      await this.merged();
      members = await this.chainAt(ref);
    }
    try {
      const c = await roomForHead(this.ctx, this.db, ref.lineage, ref.head_txid, this.epochValue, members);
      this.chain = { lineage: ref.lineage, head: ref.head_txid, members: c.members };
      return c;
    } catch (err) {
      this.opts.log?.(`chain not compacted before flush (it stays longer): ${(err as Error).message}`);
      this.chain = undefined;
      return { members: await this.chainAt(ref) };
    }
  }

  /** Starts the background merge when the chain has outgrown its soft bound and none is in flight; never throws. */
  private mergeBehind(): void {
    if (this.merging || this.terminal || this.closed) return;
    if (!this.chain || this.chain.members.length <= softBound(this.ctx)) return;
    this.merging = this.mergeLoop()
      .catch((err: unknown) => this.opts.log?.(`chain not compacted: ${(err as Error).message}`))
      .finally(() => {
        this.merging = undefined;
      });
  }

  /**
   * Merges the chain back to its soft bound while flushes go on: each merge is planned on the chain at one head and
   * its result is spliced under whatever flushes landed meanwhile (they only append). The merge never moves the
   * ref, so it cannot lose a flush; a failure is logged and the chain re-resolved on the next flush.
   */
  private async mergeLoop(): Promise<void> {
    for (;;) {
      const before = this.chain;
      if (!before || this.terminal || before.members.length <= softBound(this.ctx)) return;
      let members: DataObject[];
      try {
        const c = await compactChain(this.ctx, this.db, before.lineage, before.head, this.epochValue, before.members);
        if (!c.merged) return;
        members = c.members;
      } catch (err) {
        this.opts.log?.(`chain not compacted (the next flush retries): ${(err as Error).message}`);
        this.chain = undefined;
        return;
      }
      const now = this.chain;
      const n = before.members.length;
      const grown =
        now !== undefined &&
        now.lineage === before.lineage &&
        now.members.length >= n &&
        before.members.every((m, i) => now.members[i]?.key === m.key);
      if (!grown) return;
      this.chain = { ...now, members: [...members, ...now.members.slice(n)] };
    }
  }

  /** Re-reads the ref and fails FENCED if the lease is no longer ours at our epoch. */
  private async fenceCheck(): Promise<VersionedRef> {
    const cur = await this.ctx.store.getRef(this.db, this.branch);
    if (cur.ref.lease_holder !== this.holder || cur.ref.epoch !== this.epochValue) {
      throw fail(
        'FENCED',
        `session ${this.db}@${this.branch} was fenced: the lease is now held by ${cur.ref.lease_holder ?? 'nobody'} at epoch ${cur.ref.epoch} (ours: ${this.epochValue})`,
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
  private writingRef<T>(write: () => Promise<T>): Promise<T> {
    const run = this.refWrites.then(write);
    this.refWrites = run.catch(() => undefined);
    return run;
  }

  /**
   * Advances the head (and records a checkpoint) by CAS, retrying only while nothing but a lease renewal moved. The
   * ref was read before the upload, so a renewal may have moved it since; the retry re-reads it under writingRef,
   * where no renewal of ours can move it again. With release, the same write gives the lease back (close's last
   * flush): the CAS is on a ref that still names our lease and epoch, so a fenced session moves nothing. Returns the
   * ref written.
   */
  private record(
    cur: VersionedRef,
    txid: number,
    epoch: number,
    name: string | undefined,
    meta: Meta | undefined,
    release = false,
    said: { pages?: number; bytes?: number; origin?: Origin } = {},
  ): Promise<Ref> {
    // The record says who asked: the flush's own caller, else whoever opened the session (its automatic flushes).
    const ctx = said.origin !== undefined ? withOrigin(this.ctx, said.origin) : this.ctx;
    const op = name !== undefined ? 'checkpoint' : 'flush';
    const written = {
      ...(name !== undefined ? { name } : {}),
      ...(said.pages !== undefined ? { pages: said.pages } : {}),
      ...(said.bytes !== undefined ? { bytes: said.bytes } : {}),
    };
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
        next = await logged(ctx, this.db, this.branch, op, vref.ref, next, written);
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

  /**
   * Renews the lease now, out of turn: its daemon's liveness lapsed, so anyone may have taken the branch meanwhile,
   * and a lease found taken fences the session (the `fenced` event) before its next flush would.
   */
  renewLease(): Promise<void> {
    return this.renew();
  }

  /** Extends the lease; a tick that finds the previous renewal still under way leaves the renewing to it. */
  private async renew(): Promise<void> {
    if (this.terminal || this.closed || this.renewing) return;
    this.renewing = true;
    try {
      const renewal = this.opts.renewal ?? ((renew) => renew());
      await renewal(() => this.writingRef(() => this.renewNow()));
    } finally {
      this.renewing = false;
    }
  }

  private async renewNow(): Promise<void> {
    if (this.terminal || this.closed) return;
    const ms = leaseLength(this.opts);
    const liveness = this.opts.liveness?.id;
    try {
      await this.ctx.store.updateRef(this.db, this.branch, (r) => {
        if (r.lease_holder !== this.holder || r.epoch !== this.epochValue) {
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
      if (hasCode(err, 'FENCED')) this.fence(err);
      else this.opts.log?.(`lease renewal failed: ${(err as Error).message}`);
    }
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
  private async startCapture(ref: Ref, since?: Fingerprint, written?: StagedCheckout): Promise<LiveCapture> {
    this.captures++;
    this.capture = await startCapture(this.path, ref, {
      dir: join(this.scratch, `capture-${this.captures}`),
      log: this.opts.log ?? (() => undefined),
      onFailure: (err) => this.onCaptureFailure(err),
      ...(since !== undefined ? { since } : {}),
      ...(written !== undefined ? { written: { sidecar: written.sidecar, sums: written.sums } } : {}),
      ...(this.ctx.ephemeral?.holds(this.db, this.branch) === true ? { unsynced: true } : {}),
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
      await stopCapture(this.path, cap);
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
    const stopped = await stopCapture(this.path, cap);
    // Stamped even when the sidecars already name the head: capture's stop never leaves the mtime they record.
    const fingerprint = stopped.fingerprint === undefined ? undefined : await this.stamp(cap.sink, stopped.fingerprint);
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
      const cur = await this.fenceCheck();
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
    if (this.renewTimer) clearInterval(this.renewTimer);
    await this.merged();
    // An ephemeral fork's checkout is gone with its daemon: a crash leaves nothing to read, so nothing to guard.
    const withdrawn = withdrawSidecar(this.path, { durable: this.ctx.ephemeral?.holds(this.db, this.branch) !== true });
    // Handled here and awaited below: a failure must not surface as an unhandled rejection meanwhile.
    withdrawn.catch(() => undefined);
    this.capture = undefined;
    this.stoppedForClose = {
      sink: cap.sink,
      stopped: await stopCapture(this.path, cap, { beforeBackdate: withdrawn }),
    };
    await withdrawn;
    return true;
  }

  // Stamps the checkout as the durable head when capture left it settled and the head is our last flush; returns
  // the fingerprint stamped, or undefined when it could not.
  private async stamp(sink: SessionSink, stopped: Fingerprint): Promise<Fingerprint | undefined> {
    const cur = await this.ctx.store.getRef(this.db, this.branch).catch(() => undefined);
    if (!cur || cur.ref.head_txid !== this.durable || cur.ref.lease_holder !== this.holder) return undefined;
    return restampClean(this.ctx, this.path, cur.ref, sink, stopped).catch((err: unknown) => {
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
    return restampClean(this.ctx, this.path, ref, sink, stopped).catch((err: unknown) => {
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
    if (this.renewTimer) clearInterval(this.renewTimer);
    await this.flushing;
    await this.merged();
    const cap = this.capture;
    this.capture = undefined;
    this.evictedAt = undefined;
    const given = this.leaseGivenWith;
    if (cap !== undefined) {
      // Every descriptor on the checkout goes with the capture: a closed session leaves none behind.
      const stopped = await stopCapture(this.path, cap);
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
      await this.writingRef(async () => {
        const cur = await this.ctx.store.tryGetRef(this.db, this.branch).catch(() => undefined);
        if (cur && cur.ref.lease_holder === this.holder && cur.ref.epoch === this.epochValue) {
          await releaseLease(this.ctx, { db: this.db, branch: this.branch }).catch(() => undefined);
        }
      });
    // A few small files in a private directory: removed in place rather than one thread-pool trip per entry.
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
