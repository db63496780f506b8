import { named, nameMap } from '../core/name-map.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CaptureEngine } from '../capture/engine.js';
import { asOffshootError, fail, hasCode, type OffshootError } from '../core/errors.js';
import type { DataObject } from '../core/keys.js';
import { validateMeta, type Meta } from '../core/meta.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import { formatTarget, type Target } from '../core/target.js';
import { checkout } from '../ops/checkout.js';
import { installCheckout } from '../ops/helpers/checkout/install-checkout.js';
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
import type { OpsContext } from '../ops/helpers/context/context.js';
import { keepDivergedCheckout } from '../ops/helpers/safety/keep-diverged.js';
import { checkoutPath } from '../ops/helpers/context/paths.js';
import { SAFETY_FORK_TTL } from '../ops/helpers/safety/safety-fork.js';
import { acquireLease, releaseLease } from '../ops/lease.js';
import { processSpace } from '../platform/process-space.js';
import { cachedChain } from '../ops/helpers/chain/materialize.js';
import { ChainResolver } from '../store/chain-resolver.js';
import type { VersionedRef } from '../store/store.js';
import { quiesce } from '../sqlite/quiesce.js';
import type { EventType, SessionInfo } from '../protocol/wire.js';
import { cleanProof } from './clean-proof.js';
import { restampClean } from './restamp.js';
import { makeSessionScratch } from './scratch-dir.js';
import { SessionSink } from './session-sink.js';
import { writeSegment, writeSnapshot } from './segment-file.js';

/**
 * Keeps whatever the checkout holds beyond the branch head (writes a killed daemon captured but never flushed, or
 * at-rest edits never checkpointed) as an undo branch, then re-materializes the head, so the checkout the session
 * opens is exactly the durable head and nothing is discarded. Returns the warnings for the caller.
 */
async function keepUnflushed(ctx: OpsContext, t: Target): Promise<string[]> {
  const { ref } = await ctx.store.getRef(t.db, t.branch);
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

/** How a session behaves; the daemon passes its flags through. */
export interface SessionOptions {
  leaseTtlMs?: number;
  renewEveryMs?: number;
  onEvent?: (type: EventType, detail: Record<string, unknown>) => void;
  log?: (m: string) => void;
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

  private constructor(
    private readonly ctx: OpsContext,
    readonly db: string,
    readonly branch: string,
    readonly path: string,
    private readonly scratch: string,
    private readonly sink: SessionSink,
    private readonly engine: CaptureEngine,
    private readonly opts: SessionOptions,
    epoch: number,
    durable: number,
  ) {
    this.epochValue = epoch;
    this.durable = durable;
  }

  /** Leases the branch, checks it out (reusing a clean checkout) and starts capturing it. */
  static async open(ctx: OpsContext, t: Target, opts: SessionOptions): Promise<Session> {
    const leaseMs = opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    const lease = await acquireLease(ctx, t, `${leaseMs}ms`, { space: processSpace() });
    let scratch: string | undefined;
    try {
      const warnings = await keepUnflushed(ctx, t);
      const co = await checkout(ctx, t);
      const { ref } = await ctx.store.getRef(t.db, t.branch);
      scratch = await makeSessionScratch(ctx.checkoutRoot);
      const sink = new SessionSink(scratch);
      const proof = await cleanProof(co.path, ref);
      if (proof) sink.seedClean(proof.sums, proof.checksum);
      const engine = new CaptureEngine({
        dbPath: co.path,
        scratchDir: join(scratch, 'capture'),
        sink,
        log: opts.log ?? (() => undefined),
        ...(proof ? { provenClean: proof.stillClean } : {}),
      });
      await engine.start();
      const s = new Session(ctx, t.db, t.branch, co.path, scratch, sink, engine, opts, lease.epoch, ref.head_txid);
      s.warnings = warnings;
      s.renewTimer = setInterval(() => void s.renew(), opts.renewEveryMs ?? DEFAULT_RENEW_MS);
      s.renewTimer.unref();
      opts.onEvent?.('session_opened', { holder: ctx.holder, epoch: lease.epoch });
      return s;
    } catch (err) {
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
    return this.sink.dirty;
  }

  /** The terminal error (e.g. FENCED) that keeps this session from flushing until it is closed. */
  get error(): OffshootError | undefined {
    return this.terminal;
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
      capture_lag_bytes: this.engine.lag(),
      unflushed_bytes: this.sink.pendingBytes,
    };
    if (this.lastFlushAt) {
      info.last_flush_at = this.lastFlushAt.toISOString();
      info.durable_age = `${Math.round((Date.now() - this.lastFlushAt.getTime()) / 1000)}s`;
    }
    if (this.flushError) info.flush_error = this.flushError;
    if (this.terminal) info.error = this.terminal.message;
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
  flush(opts: { name?: string; meta?: Meta; kind: 'auto' | 'manual' }): Promise<FlushOutcome> {
    const run = this.flushing.then(() => this.flushOnce(opts));
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

  private async flushOnce(opts: { name?: string; meta?: Meta; kind: 'auto' | 'manual' }): Promise<FlushOutcome> {
    const started = Date.now();
    if (opts.name !== undefined) validateName('checkpoint', opts.name);
    if (opts.meta !== undefined && opts.name === undefined)
      throw fail('INVALID_ARGUMENT', 'flush meta needs a checkpoint name', {
        hint: 'pass a checkpoint name with the meta',
      });
    validateMeta(opts.meta);
    if (this.terminal) throw this.terminal;
    try {
      await this.engine.drainNow();
      const cur = await this.fenceCheck();
      if (opts.name !== undefined && named(cur.ref.checkpoints, opts.name)) {
        throw fail('ALREADY_EXISTS', `checkpoint "${opts.name}" already exists on ${this.db}@${this.branch}`, {
          hint: 'pick another checkpoint name',
        });
      }
      let outcome: FlushOutcome;
      if (!this.sink.dirty) {
        if (opts.name !== undefined)
          await this.record(cur, cur.ref.head_txid, cur.ref.head_epoch, opts.name, opts.meta);
        outcome = { txid: cur.ref.head_txid, kind: 'none', durationMs: Date.now() - started };
      } else {
        outcome = await this.writeFlush(cur, opts.name, opts.meta, started);
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
    cur: VersionedRef,
    name: string | undefined,
    meta: Meta | undefined,
    started: number,
  ): Promise<FlushOutcome> {
    const batch = this.sink.take();
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
                await new ChainResolver(this.ctx.store).resolve(cur.ref.lineage, cur.ref.head_txid),
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
            await this.record(up, txid, this.epochValue, name, meta);
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
        await rm(out, { force: true });
        await rm(join(this.scratch, 'snapshot-work.db'), { force: true });
      }
      await this.sink.committed(batch);
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
      this.sink.restore(batch);
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
    const chain = await new ChainResolver(this.ctx.store).resolve(ref.lineage, ref.head_txid);
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
      const c = await roomForHead(this.ctx, ref.lineage, ref.head_txid, this.epochValue, members);
      this.chain = { lineage: ref.lineage, head: ref.head_txid, members: c.members };
      return c;
    } catch (err) {
      this.opts.log?.(`chain not compacted before flush (it stays longer): ${(err as Error).message}`);
      this.chain = undefined;
      return { members: await this.chainAt(ref) };
    }
  }

  /** Starts the background merge when the chain has outgrown its soft bound and none is in flight. */
  private mergeBehind(): void {
    if (this.merging || this.terminal || this.closed) return;
    if (!this.chain || this.chain.members.length <= softBound(this.ctx)) return;
    this.merging = this.mergeLoop().finally(() => {
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
        const c = await compactChain(this.ctx, before.lineage, before.head, this.epochValue, before.members);
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
   * where no renewal of ours can move it again.
   */
  private record(
    cur: VersionedRef,
    txid: number,
    epoch: number,
    name: string | undefined,
    meta: Meta | undefined,
  ): Promise<void> {
    return this.writingRef(async () => {
      let vref = cur;
      const prevHead = cur.ref.head_txid;
      for (let attempt = 0; ; attempt++) {
        const now = new Date().toISOString();
        const next: Ref = {
          ...vref.ref,
          head_txid: txid,
          head_epoch: epoch,
          touched_at: now,
          checkpoints: nameMap(vref.ref.checkpoints),
        };
        if (name !== undefined) next.checkpoints[name] = { txid, epoch, created_at: now, ...(meta ? { meta } : {}) };
        try {
          await this.ctx.store.casRef(this.db, this.branch, vref.etag, next);
          return;
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

  /** Extends the lease; a tick that finds the previous renewal still under way leaves the renewing to it. */
  private async renew(): Promise<void> {
    if (this.terminal || this.closed || this.renewing) return;
    this.renewing = true;
    try {
      await this.writingRef(() => this.renewNow());
    } finally {
      this.renewing = false;
    }
  }

  private async renewNow(): Promise<void> {
    if (this.terminal || this.closed) return;
    const ms = this.opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
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
        return { ...r, lease_expiry: new Date(this.ctx.now().getTime() + ms).toISOString() };
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
    void this.engine.stop();
  }

  /** Flushes pending writes, stops capture, re-stamps a provably clean checkout, and releases the lease. */
  async close(): Promise<void> {
    if (this.closed) return;
    let failure: OffshootError | undefined = this.terminal;
    if (!failure) {
      try {
        await this.flush({ kind: 'manual' });
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
    const { clean } = await this.engine.stop();
    if (mayRestamp && clean && !this.sink.dirty && !this.terminal) {
      const cur = await this.ctx.store.getRef(this.db, this.branch).catch(() => undefined);
      if (cur && cur.ref.head_txid === this.durable && cur.ref.lease_holder === this.holder) {
        await restampClean(this.ctx, this.path, cur.ref, this.sink).catch((err) =>
          this.opts.log?.(`checkout not re-stamped: ${(err as Error).message}`),
        );
      }
    }
    await this.writingRef(async () => {
      const cur = await this.ctx.store.tryGetRef(this.db, this.branch).catch(() => undefined);
      if (cur && cur.ref.lease_holder === this.holder && cur.ref.epoch === this.epochValue) {
        await releaseLease(this.ctx, { db: this.db, branch: this.branch }).catch(() => undefined);
      }
    });
    await rm(this.scratch, { recursive: true, force: true });
  }
}
