import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CaptureEngine } from '../capture/engine.js';
import { asOffshootError, fail, hasCode, type OffshootError } from '../core/errors.js';
import { segmentKey, snapshotKey } from '../core/keys.js';
import { validateMeta, type Meta } from '../core/meta.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { checkout } from '../ops/checkout.js';
import type { OpsContext } from '../ops/helpers/context.js';
import { acquireLease, releaseLease } from '../ops/lease.js';
import { cachedChain } from '../ops/helpers/materialize.js';
import { ChainResolver } from '../store/chain-resolver.js';
import type { VersionedRef } from '../store/store.js';
import type { EventType, SessionInfo } from '../protocol/wire.js';
import { cleanProof } from './clean-proof.js';
import { restampClean } from './restamp.js';
import { makeSessionScratch } from './scratch-dir.js';
import { SessionSink } from './session-sink.js';
import { writeSegment, writeSnapshot } from './segment-file.js';

/** How a session behaves; the daemon passes its flags through. */
export interface SessionOptions {
  snapshotEvery: number;
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
  private closed = false;
  private depth: { lineage: string; head: number; members: number } | undefined;

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
    const lease = await acquireLease(ctx, t, `${leaseMs}ms`);
    let scratch: string | undefined;
    try {
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
    this.flushing = run.catch(() => undefined);
    return run;
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
      if (opts.name !== undefined && cur.ref.checkpoints[opts.name]) {
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
      const depth = await this.chainDepth(cur.ref);
      const snapshot =
        batch.forceSnapshot ||
        depth >= this.opts.snapshotEvery ||
        (batch.commit >= 64 && batch.pages.length / batch.commit >= 0.5);
      const out = join(this.scratch, `flush-${txid}.ltx`);
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
          await writeSnapshot(batch, base, join(this.scratch, 'snapshot-work.db'), txid, out, Date.now());
        } else {
          await writeSegment(batch, txid, out, Date.now());
        }
        let vref = cur;
        for (let attempt = 0; ; attempt++) {
          const key = snapshot
            ? snapshotKey(vref.ref.lineage, this.epochValue, txid)
            : segmentKey(vref.ref.lineage, this.epochValue, txid, txid);
          try {
            await this.ctx.store.putData(key, { file: out });
            break;
          } catch (err) {
            if (!hasCode(err, 'ALREADY_EXISTS') || attempt >= 3) throw err;
            // The orphan of a crashed attempt at this epoch: move to a fresh epoch we still own rather than overwrite.
            vref = await this.bumpEpoch(vref);
          }
        }
        await this.record(vref, txid, this.epochValue, name, meta);
      } finally {
        await rm(out, { force: true });
        await rm(join(this.scratch, 'snapshot-work.db'), { force: true });
      }
      await this.sink.committed(batch);
      this.durable = txid;
      this.depth = { lineage: cur.ref.lineage, head: txid, members: snapshot ? 1 : depth + 1 };
      return { txid, kind: snapshot ? 'snapshot' : 'segment', durationMs: Date.now() - started };
    } catch (err) {
      this.sink.restore(batch);
      throw err;
    }
  }

  /**
   * How many members the chain at the ref's head has, for the snapshot cadence: resolved from the store once, then
   * carried forward by this session's own flushes, so a flush costs no listing of the lineage.
   */
  private async chainDepth(ref: Ref): Promise<number> {
    if (this.depth && this.depth.lineage === ref.lineage && this.depth.head === ref.head_txid)
      return this.depth.members;
    const chain = await new ChainResolver(this.ctx.store).resolve(ref.lineage, ref.head_txid);
    this.depth = { lineage: ref.lineage, head: ref.head_txid, members: chain.members.length };
    return this.depth.members;
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

  private async bumpEpoch(cur: VersionedRef): Promise<VersionedRef> {
    const next: Ref = { ...cur.ref, epoch: cur.ref.epoch + 1 };
    const etag = await this.ctx.store.casRef(this.db, this.branch, cur.etag, next);
    this.epochValue = next.epoch;
    return { ref: { ...next, generation: (next.generation ?? 0) + 1 }, etag };
  }

  /** Advances the head (and records a checkpoint) by CAS, retrying only while nothing but a lease renewal moved. */
  private async record(
    cur: VersionedRef,
    txid: number,
    epoch: number,
    name: string | undefined,
    meta: Meta | undefined,
  ): Promise<void> {
    let vref = cur;
    const prevHead = cur.ref.head_txid;
    for (let attempt = 0; ; attempt++) {
      const now = new Date().toISOString();
      const next: Ref = {
        ...vref.ref,
        head_txid: txid,
        head_epoch: epoch,
        touched_at: now,
        checkpoints: { ...vref.ref.checkpoints },
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
  }

  private async renew(): Promise<void> {
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
    const { clean } = await this.engine.stop();
    if (mayRestamp && clean && !this.sink.dirty && !this.terminal) {
      const cur = await this.ctx.store.getRef(this.db, this.branch).catch(() => undefined);
      if (cur && cur.ref.head_txid === this.durable && cur.ref.lease_holder === this.holder) {
        await restampClean(this.ctx, this.path, cur.ref, this.sink).catch((err) =>
          this.opts.log?.(`checkout not re-stamped: ${(err as Error).message}`),
        );
      }
    }
    const cur = await this.ctx.store.tryGetRef(this.db, this.branch).catch(() => undefined);
    if (cur && cur.ref.lease_holder === this.holder && cur.ref.epoch === this.epochValue) {
      await releaseLease(this.ctx, { db: this.db, branch: this.branch }).catch(() => undefined);
    }
    await rm(this.scratch, { recursive: true, force: true });
  }
}
