import { utimesSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { asOffshootError, fail, type OffshootError } from '../core/errors.js';
import { fingerprintOf, stillFingerprinted, stopStampSeconds, type Fingerprint } from '../sqlite/checkout-sidecar.js';
import { putKept } from '../sqlite/kept-connection.js';
import { walBytes } from '../sqlite/wal-bytes.js';
import { WAL_FRAME_HEADER_SIZE, WAL_HEADER_SIZE } from '../sqlite/wal-header.js';
import {
  WalReader,
  isWalRestarted,
  readAllTransactions,
  type WalRestartedError,
  type WalSalts,
  type WalTransaction,
} from '../sqlite/wal-reader.js';
import { CaptureConnection, LOCK_BUDGET_MS, type CheckpointResult } from './capture-connection.js';
import { dbFileFd, releaseDbFiles } from './db-file-cache.js';
import { breachAt, ContractBreachError } from './journal-contract.js';
import { loadCaptureState, saveCaptureState } from './capture-state.js';
import { copyMainFile } from './main-file.js';
import { readWalIndexHeader, sameGeneration, type WalIndexHeader } from './wal-index.js';
import type { CaptureSink } from './sink.js';
import { nextPollInterval } from './poll-interval.js';

/** Options of a CaptureEngine. */
export interface CaptureEngineOptions {
  /** The live checkout to capture; it must exist. */
  dbPath: string;
  /** Private directory for capture-state.json and the rebase snapshot; reusing it is what allows a clean resume. */
  scratchDir: string;
  /**
   * True when scratchDir is new and no engine ever starts in it again, after a crash or not (it is removed with its
   * owner, as a session's is): capture-state.json is then never written nor read, since no later start could resume
   * from it (`provenClean` is the way such an engine skips its rebase).
   */
  volatileState?: boolean;
  /**
   * True when the checkout need not reach the disk (an ephemeral fork's, gone with its daemon): the engine's own
   * checkpoints never sync it, until syncCheckout says otherwise.
   */
  unsynced?: boolean;
  sink: CaptureSink;
  /** Poll interval of the -wal while transactions arrive (default 10 ms). */
  pollMs?: number;
  /**
   * Longest poll interval once the -wal is quiet (default 100 ms): the interval doubles from pollMs after each poll
   * that found nothing and drops back at the first new transaction, so an idle session costs next to no CPU.
   */
  idlePollMs?: number;
  /**
   * Poll interval once nothing has arrived for restAfterMs (defaults 1000 ms after 10 s): a session left idle polls
   * once a second. The read lock pins the -wal meanwhile, so a writer that resumes loses nothing, and a flush drains
   * at once whatever the interval.
   */
  restPollMs?: number;
  restAfterMs?: number;
  /** Also take over after this many captured transactions (no limit by default; a knob for tests to force one). */
  takeoverTransactions?: number;
  /**
   * Frames captured since the last takeover before the engine backfills them into the main file, which holds no
   * writer up (default 256).
   */
  takeoverFrames?: number;
  /**
   * Frames of the -wal's current generation at which a takeover also takes the write lock for a moment, so that the
   * WAL resets even under a writer that never pauses (default 768).
   */
  resetFrames?: number;
  /** Quiet time after the last commit before a takeover of whatever was captured (default 5000 ms). */
  idleTakeoverMs?: number;
  log?: (msg: string) => void;
  /**
   * Called under the read lock when no verified clean shutdown is recorded: true when the caller can prove the main
   * file is exactly what its sink was seeded with (an O(1) fingerprint), so capture starts without a rebase copy.
   */
  provenClean?: () => boolean;
  /** Told once when the engine stops on a failure (a ContractBreachError when the checkout left WAL mode). */
  onFailure?: (err: OffshootError) => void;
}

/** How one drain step ended. */
type Step = 'applied' | 'regenerated' | 'idle';

const DRAIN_BUDGET_MS = 2000;
/** How long a takeover tries for the write lock, one attempt a millisecond, before it is postponed. */
const WRITE_LOCK_BUDGET_MS = 1000;
/** Attempts, and the pause between them, at folding the last frames under the write lock (at most 1 ms in all). */
const FOLD_RETRIES = 5;
const FOLD_RETRY_MS = 0.2;
// Atomics.wait on a private buffer is the only synchronous sub-millisecond pause: the write lock is held meanwhile.
const pause = new Int32Array(new SharedArrayBuffer(4));
/** How long a takeover waits for a transaction the wal-index has not published yet. */
const SETTLE_BUDGET_MS = 1000;
/** Pause of the ticker's takeovers after one could not fold the -wal (a foreign reader pins an old snapshot). */
const TAKEOVER_RETRY_MS = 250;
const DRAIN_NOW_DEADLINE_MS = 15_000;
const SHUTDOWN_BUDGET_MS = 5000;
const SNAPSHOT_FILE = 'snapshot.db';
const DEFAULT_TAKEOVER_FRAMES = 256;
/**
 * The -wal size (in frames) at which a takeover takes the write lock. It holds a busy writer up for a moment, so
 * such takeovers are few; and the size stays under SQLite's own autocheckpoint size (1000), past which the writer
 * would try a checkpoint of a -wal the capture pins at every commit.
 */
const DEFAULT_RESET_FRAMES = 768;

/**
 * Live WAL capture of one checkout. It holds a read transaction on its own connection so that no other
 * connection can reset the WAL, hands every committed transaction to the sink exactly once, owns checkpointing
 * (takeovers), re-baselines the sink whenever continuity cannot be proven, and on a verified clean stop leaves a
 * fingerprint that lets the next engine on the same scratch directory resume without a rebase.
 *
 * A takeover never leaves the -wal unpinned and never waits for readers under the write lock: a second connection
 * pins the current end while the first backfills everything captured with a PASSIVE checkpoint, and only the few
 * frames committed meanwhile are folded under a briefly held write lock. The writer then resets the WAL itself at its
 * next commit, which is the one restart the engine expects. Before the engine lets go of a pin, it has captured
 * everything the remaining pin could let a checkpoint fold, so a reset can only ever discard frames already captured.
 */
export class CaptureEngine {
  readonly #dbPath: string;
  readonly #walPath: string;
  readonly #shmPath: string;
  readonly #scratchDir: string;
  readonly #volatileState: boolean;
  readonly #sink: CaptureSink;
  readonly #pollMs: number;
  readonly #idlePollMs: number;
  readonly #restPollMs: number;
  readonly #restAfterMs: number;
  readonly #takeoverTransactions: number;
  readonly #takeoverFrames: number;
  readonly #resetFrames: number;
  readonly #idleTakeoverMs: number;
  readonly #log: (msg: string) => void;
  readonly #provenClean: (() => boolean) | undefined;
  readonly #onFailure: ((err: OffshootError) => void) | undefined;

  #conn: CaptureConnection | undefined;
  // Pins the -wal while #conn checkpoints, and holds the write lock for a takeover's last step; never left locked.
  #helper: CaptureConnection | undefined;
  #unsynced: boolean;
  #takeoverAfter = 0;
  #reader: WalReader | undefined;
  #pageSize = 0;
  // Byte offset just past the last transaction the sink applied, in the reader's generation (0: none yet).
  #consumedOff = 0;
  // Length of the previous generation's file when an expected restart landed; RESTART never shrinks the -wal.
  #deadTail = 0;
  #captured = 0;
  // Frames of the current generation captured when the last takeover ran.
  #framesAtTakeover = 0;
  #lastCommitAt = 0;
  // Transactions applied since start, across takeovers: the poll loop backs off while this stands still.
  #applied = 0;
  #polls = 0;
  #expectRestart = false;

  #rebases = 0;
  #takeovers = 0;
  #resumed = false;
  #stateSaves = 0;
  #stoppedFingerprint: Fingerprint | undefined;

  #phase: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  #starting: Promise<unknown> | undefined;
  #stopping: Promise<{ clean: boolean; kept?: true }> | undefined;
  #failure: OffshootError | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #loop: Promise<void> | undefined;
  readonly #wake = new AbortController();

  constructor(opts: CaptureEngineOptions) {
    this.#dbPath = opts.dbPath;
    this.#walPath = `${opts.dbPath}-wal`;
    this.#shmPath = `${opts.dbPath}-shm`;
    this.#scratchDir = opts.scratchDir;
    this.#volatileState = opts.volatileState ?? false;
    this.#unsynced = opts.unsynced ?? false;
    this.#sink = opts.sink;
    this.#pollMs = opts.pollMs ?? 10;
    this.#idlePollMs = Math.max(this.#pollMs, opts.idlePollMs ?? 100);
    this.#restPollMs = Math.max(this.#idlePollMs, opts.restPollMs ?? 1000);
    this.#restAfterMs = opts.restAfterMs ?? 10_000;
    this.#takeoverTransactions = opts.takeoverTransactions ?? Infinity;
    this.#takeoverFrames = opts.takeoverFrames ?? DEFAULT_TAKEOVER_FRAMES;
    this.#resetFrames = opts.resetFrames ?? DEFAULT_RESET_FRAMES;
    this.#idleTakeoverMs = opts.idleTakeoverMs ?? 5000;
    this.#log = opts.log ?? (() => {});
    this.#provenClean = opts.provenClean;
    this.#onFailure = opts.onFailure;
  }

  /** From now on the engine's checkpoints sync the checkout (an ephemeral fork was kept). */
  syncCheckout(): void {
    this.#unsynced = false;
    this.#conn?.synced();
    this.#helper?.synced();
  }

  /** Rebases performed (the startup one included). */
  get rebases(): number {
    return this.#rebases;
  }

  /** Polls of the -wal the loop has made since start. */
  get polls(): number {
    return this.#polls;
  }

  /** Takeovers that folded every captured frame into the main file, so that the next writer resets the WAL. */
  get takeovers(): number {
    return this.#takeovers;
  }

  /** True when start() resumed from a verified clean shutdown instead of rebasing. */
  get resumed(): boolean {
    return this.#resumed;
  }

  /**
   * Durable writes of capture-state.json so far: at start, at each rebase, on a failure and at stop (two for a
   * clean one), never per captured burst (its fsyncs would compete with the writer's own, and nothing resumes from
   * a mid-run position).
   */
  get stateSaves(): number {
    return this.#stateSaves;
  }

  /** The fatal error that stopped the engine, if any; drainNow rejects with it from then on. */
  get failure(): OffshootError | undefined {
    return this.#failure;
  }

  /**
   * After a clean stop, the main file's fingerprint as the engine left it: its mtime moved a minute back under the
   * read lock, so any later write (a foreign commit after capture let go) shows as a different fingerprint.
   */
  get stoppedFingerprint(): Fingerprint | undefined {
    return this.#stoppedFingerprint;
  }

  /** When the last transaction was captured (or the engine started), in ms since the epoch. */
  get lastCaptureAt(): number {
    return this.#lastCommitAt;
  }

  /**
   * Opens the engine's connection, takes the read lock, then resumes from a clean shutdown recorded in the scratch
   * directory or else rebases the sink, and starts polling.
   */
  start(): Promise<{ resumed: boolean }> {
    if (this.#phase !== 'new') {
      return Promise.reject(
        fail('INVALID_ARGUMENT', `capture engine for ${this.#dbPath} was already started`, {
          hint: 'create a new CaptureEngine for every start',
        }),
      );
    }
    this.#phase = 'starting';
    const started = this.#enqueue(() => this.#startOnce());
    this.#starting = started.catch(() => undefined);
    return started;
  }

  async #startOnce(): Promise<{ resumed: boolean }> {
    try {
      await mkdir(this.#scratchDir, { recursive: true });
      // Opening switches the file to WAL: a checkout some connection took out of it must be caught first.
      this.#checkContract();
      const synced = { synced: !this.#unsynced };
      const conn = await CaptureConnection.open(this.#dbPath, undefined, synced);
      this.#conn = conn;
      this.#helper = await CaptureConnection.open(this.#dbPath, 0, synced);
      this.#pageSize = conn.pageSize;
      this.#reader = this.#freshReader();
      this.#resumed = await this.#tryResume(conn);
      if (!this.#resumed) await this.#rebase('starting without a verified clean shutdown');
    } catch (err) {
      this.#closeConnection();
      this.#phase = 'stopped';
      throw asOffshootError(err);
    }
    this.#lastCommitAt = Date.now();
    this.#phase = 'running';
    this.#loop = this.#run();
    return { resumed: this.#resumed };
  }

  /**
   * Captures everything committed before the call: drains the -wal up to its size when the request is serviced,
   * following an expected restart into the new generation. Rejects with TIMEOUT after 15 s. Any failure is fatal:
   * the engine stops and keeps rejecting.
   */
  drainNow(): Promise<void> {
    return this.#guarded(() => this.#drainToTarget());
  }

  /** Bytes of -wal not yet captured; reads the position before the file size, so it under-reports, never over. */
  lag(): number {
    const seen = Math.max(this.#consumedOff, this.#deadTail);
    return Math.max(0, walBytes(this.#dbPath) - seen);
  }

  /**
   * Stops polling and shuts down: a final drain, then RESTART proving nothing unseen was folded, TRUNCATE, and the
   * main file's backdated fingerprint saved as a clean state. clean is false when any step could not be proven; never throws.
   * `beforeBackdate`, when given, is awaited just before the main file is backdated: a step of the caller's that must
   * have landed before the checkout may look settled, run meanwhile beside the drain and RESTART (its rejection makes
   * the stop unclean, with the file never backdated).
   */
  stop(opts: { beforeBackdate?: Promise<unknown>; keep?: boolean } = {}): Promise<{ clean: boolean; kept?: true }> {
    this.#stopping ??= this.#stopOnce(opts.beforeBackdate, opts.keep === true);
    return this.#stopping;
  }

  async #stopOnce(
    beforeBackdate: Promise<unknown> | undefined,
    keep: boolean,
  ): Promise<{ clean: boolean; kept?: true }> {
    if (this.#phase === 'starting') await this.#starting;
    if (this.#phase === 'new' || this.#phase === 'stopped') {
      this.#phase = 'stopped';
      return { clean: false };
    }
    this.#phase = 'stopping';
    this.#wake.abort();
    await this.#loop;
    const result = await this.#enqueue(() => this.#shutdown(beforeBackdate, keep));
    this.#phase = 'stopped';
    return result;
  }

  async #run(): Promise<void> {
    let interval = this.#pollMs;
    while (this.#phase === 'running') {
      try {
        await sleep(interval, undefined, { signal: this.#wake.signal });
      } catch {
        return;
      }
      if (this.#phase !== 'running') return;
      const applied = this.#applied;
      try {
        await this.#guarded(() => this.#tick());
      } catch {
        return;
      }
      const resting = Date.now() - this.#lastCommitAt >= this.#restAfterMs;
      interval = nextPollInterval(
        interval,
        this.#applied !== applied,
        this.#pollMs,
        resting ? this.#restPollMs : this.#idlePollMs,
      );
      this.#polls++;
    }
  }

  // Every use of the connection and the reader runs through this queue, one at a time, in request order.
  #enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(fn);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  // A queued operation whose failure is fatal: it records the failure and shuts the connection.
  #guarded(fn: () => Promise<void>): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#failure !== undefined) throw this.#failure;
      if (this.#conn === undefined) {
        throw fail('UNAVAILABLE', `capture of ${this.#dbPath} is not running`, { hint: 'start a new capture engine' });
      }
      try {
        await fn();
      } catch (err) {
        throw await this.#fail(err);
      }
    });
  }

  async #fail(err: unknown): Promise<OffshootError> {
    const failure = this.#explain(asOffshootError(err));
    this.#failure = failure;
    this.#phase = 'stopped';
    this.#wake.abort();
    this.#log(`capture of ${this.#dbPath} stopped: ${failure.message}`);
    try {
      await this.#saveState(false);
    } catch (saveErr) {
      this.#log(`cannot record the capture position of ${this.#dbPath}: ${(saveErr as Error).message}`);
    }
    this.#closeConnection();
    this.#onFailure?.(failure);
    return failure;
  }

  // A failure of the -wal or -shm can be the connection contract broken; the contract error says so, and the fix.
  #explain(err: OffshootError): OffshootError {
    if (err instanceof ContractBreachError) return err;
    try {
      const breach = breachAt(this.#dbPath, dbFileFd(this.#dbPath));
      return breach === undefined ? err : new ContractBreachError(breach, this.#dbPath);
    } catch {
      return err;
    }
  }

  // Throws the ContractBreachError of a checkout that is not (or no longer) in WAL mode.
  #checkContract(): void {
    const breach = breachAt(this.#dbPath, dbFileFd(this.#dbPath));
    if (breach !== undefined) throw new ContractBreachError(breach, this.#dbPath);
  }

  #closeConnection(): void {
    const conns = [this.#helper, this.#conn];
    this.#conn = undefined;
    this.#helper = undefined;
    for (const conn of conns) {
      try {
        conn?.close();
      } catch (err) {
        this.#log(`closing the capture connection to ${this.#dbPath} failed: ${(err as Error).message}`);
      }
    }
  }

  #requireHelper(): CaptureConnection {
    if (this.#helper === undefined) throw fail('INTERNAL', `capture connection to ${this.#dbPath} is closed`);
    return this.#helper;
  }

  #requireConn(): CaptureConnection {
    if (this.#conn === undefined) throw fail('INTERNAL', `capture connection to ${this.#dbPath} is closed`);
    return this.#conn;
  }

  #requireReader(): WalReader {
    if (this.#reader === undefined) throw fail('INTERNAL', `capture of ${this.#dbPath} has no WAL reader`);
    return this.#reader;
  }

  #freshReader(): WalReader {
    return new WalReader(this.#walPath, this.#pageSize);
  }

  // Number of frames before byte offset off of the -wal (0 for 0: nothing read).
  #frameAt(off: number): number {
    if (off === 0) return 0;
    return (off - WAL_HEADER_SIZE) / (WAL_FRAME_HEADER_SIZE + this.#pageSize);
  }

  #framesConsumed(): number {
    return this.#frameAt(this.#consumedOff);
  }

  // The read lock is taken before looking: the -wal and the main file cannot change behind the checks.
  async #tryResume(conn: CaptureConnection): Promise<boolean> {
    // A volatile engine's directory is new: there is no state to read, and none a crash could leave for a start.
    const state = this.#volatileState ? undefined : await loadCaptureState(this.#scratchDir);
    const recorded = state?.clean === true ? state.main_fp : undefined;
    if (recorded === undefined && this.#provenClean === undefined) return false;
    await conn.lock();
    const proven = recorded ? this.#unchangedSince(recorded) : (this.#provenClean?.() ?? false);
    if (!proven) {
      this.#log(`not resuming capture of ${this.#dbPath}: the main file changed while capture was down`);
      conn.unlock();
      return false;
    }
    // Commits made while capture was down and never checkpointed are still in the -wal: with the main file as it
    // was, they are all there, in one generation from its first frame (a reset needs everything checkpointed into
    // the main file first), and the fresh reader captures them from the start.
    const written = walBytes(this.#dbPath);
    if (written >= WAL_HEADER_SIZE)
      this.#log(`resuming capture of ${this.#dbPath} with ${written} bytes of -wal written while it was down`);
    // From here a crash must not look like a clean shutdown: the sink is about to move past the proven state. A
    // volatile engine's state is never read by a start, so there is nothing to overwrite.
    if (!this.#volatileState) await this.#saveState(false);
    return true;
  }

  // Takeovers come as soon as they are due, even while a writer that never pauses keeps the drain busy.
  async #tick(): Promise<void> {
    const deadline = Date.now() + DRAIN_BUDGET_MS;
    for (;;) {
      const due = await this.#drainFor(deadline - Date.now(), true);
      if (Date.now() >= this.#takeoverAfter) await this.#maybeTakeover();
      if (!due || Date.now() >= deadline) return;
    }
  }

  // A bounded drain: a writer that never pauses must not starve the loop (flush requests, shutdown). True when it
  // stopped early because a takeover is due (only if asked to).
  async #drainFor(budgetMs: number, stopWhenDue = false): Promise<boolean> {
    const started = Date.now();
    while (Date.now() - started < budgetMs) {
      if ((await this.#step()) === 'idle') return false;
      if (stopWhenDue && this.#takeoverDue()) return true;
    }
    return false;
  }

  // A takeover is due by the count of transactions or of frames captured since the last one.
  #takeoverDue(): boolean {
    if (this.#captured === 0) return false;
    const frames = this.#framesConsumed() - this.#framesAtTakeover;
    return this.#captured >= this.#takeoverTransactions || frames >= this.#takeoverFrames;
  }

  async #drainToTarget(): Promise<void> {
    const deadline = Date.now() + DRAIN_NOW_DEADLINE_MS;
    let target = walBytes(this.#dbPath);
    for (;;) {
      // next() first: only its salt check notices a restart, after which a stale offset may exceed the new size.
      const step = await this.#step();
      if (step === 'idle') break;
      if (step === 'regenerated') target = walBytes(this.#dbPath);
      else if (this.#requireReader().offset >= target) break;
      if (Date.now() > deadline) {
        throw fail(
          'TIMEOUT',
          `capture of ${this.#dbPath} could not catch up with its -wal within ${DRAIN_NOW_DEADLINE_MS / 1000} s`,
          {
            retryable: true,
            hint: 'the writer is outpacing capture; pause heavy writes, then reopen the session',
          },
        );
      }
    }
    await this.#maybeTakeover();
  }

  async #step(): Promise<Step> {
    const reader = this.#requireReader();
    // The wal-index is read before the frames. Frames up to its mxFrame are committed and final; a complete
    // transaction beyond it may be a writer's between publishing and committing, or a killed writer's that was
    // never committed and that the next writer will overwrite.
    const index = readWalIndexHeader(this.#shmPath);
    // Copies disagree: a writer is mid-commit (or died there, and the next connection to read recovers it).
    if (index === undefined) return 'idle';
    const wasBound = reader.bound;
    const indexedGeneration = sameGeneration(reader.salts, index);
    if (wasBound && indexedGeneration && index.mxFrame <= this.#frameAt(reader.offset)) return 'idle';
    let txn;
    try {
      txn = await reader.next();
    } catch (err) {
      if (!isWalRestarted(err)) throw err;
      await this.#onRestart(err as WalRestartedError);
      return 'regenerated';
    }
    if (!wasBound && !sameGeneration(reader.salts, index)) {
      // A new -wal header is written before the index learns its salts (a first commit after TRUNCATE uses fresh
      // random salts): stay unbound until the index vouches for the generation, whose frames are then read again.
      this.#reader = this.#freshReader();
      return 'idle';
    }
    if (txn === undefined) return 'idle';
    if (!sameGeneration(reader.salts, index) || this.#frameAt(txn.endOffset) > index.mxFrame) {
      if (!wasBound) {
        this.#reader = this.#freshReader();
        return 'idle';
      }
      // Bound to a generation the index vouched for, which has since been reset: after a verified takeover its
      // uncommitted tail is dead; otherwise the reset was not ours, and nothing but a rebase is safe.
      if (!indexedGeneration && this.#expectRestart) return 'idle';
      // Frames between our position and mxFrame end on a commit frame: reaching past it means we lost the chain.
      await this.#rebase(
        indexedGeneration
          ? 'the WAL reader ran past the last committed frame'
          : 'the WAL was reset by another connection',
      );
      return 'regenerated';
    }
    await this.#apply(txn);
    return 'applied';
  }

  // The position moves only once the sink has the transaction.
  async #apply(txn: WalTransaction): Promise<void> {
    await this.#sink.apply(this.#pageSize, txn);
    this.#consumedOff = txn.endOffset;
    this.#captured++;
    this.#applied++;
    this.#lastCommitAt = Date.now();
  }

  async #onRestart(err: WalRestartedError): Promise<void> {
    // Each WAL reset adds exactly 1 to salt-1. A larger step means generations we never saw: a reset, writes and
    // another reset (or a foreign TRUNCATE) inside the window between our RESTART and re-taking the read lock.
    const oneReset = (err.previous.salt1 + 1) >>> 0 === err.current.salt1;
    if (this.#expectRestart && oneReset) {
      this.#deadTail = walBytes(this.#dbPath);
      this.#reader = this.#freshReader();
      this.#consumedOff = 0;
      this.#captured = 0;
      this.#framesAtTakeover = 0;
      this.#expectRestart = false;
      return;
    }
    await this.#rebase(
      this.#expectRestart
        ? 'the WAL was reset more than once since the last takeover'
        : 'the WAL was reset by another connection',
    );
  }

  async #maybeTakeover(): Promise<void> {
    if (this.#captured === 0) return;
    const idle = Date.now() - this.#lastCommitAt >= this.#idleTakeoverMs;
    // Frames decide, so one bulk transaction is followed by a takeover as promptly as many small ones, and the -wal
    // stays small whatever the transactions look like.
    if (!idle && !this.#takeoverDue()) return;
    const outcome = await this.#takeover();
    // Not folded with the writer idle: a reader pins an old snapshot, and trying again at every tick would be in
    // vain. Under a busy writer the next try comes takeoverFrames later anyway.
    if (outcome === 'pinned' && idle) this.#takeoverAfter = Date.now() + TAKEOVER_RETRY_MS;
  }

  // A takeover backfills everything captured without holding any writer up; when a commit raced that (a writer
  // that never pauses) and the -wal has grown to resetFrames, it folds the rest under the write lock, so that the
  // writer resets the WAL at its next commit all the same.
  async #takeover(): Promise<'folded' | 'pinned' | 'aborted'> {
    const conn = this.#requireConn();
    const helper = this.#requireHelper();
    const backfill = await this.#backfillPinned(conn, helper);
    this.#framesAtTakeover = this.#framesConsumed();
    if (backfill === 'aborted') return 'aborted';
    // Judged by what the backfill captured, not by what was captured when the takeover began: a capture that lags
    // a writer catches up in the backfill, and the -wal it leaves is as long as that.
    const mayLock = this.#captured >= this.#takeoverTransactions || this.#framesConsumed() >= this.#resetFrames;
    if (backfill === 'partial' && !(mayLock && (await this.#foldUnderWriteLock(conn, helper)))) return 'pinned';
    this.#takeovers++;
    this.#captured = 0;
    // The reset is lazy: the old frames stay readable until the next writer starts, so the reader is kept (a fresh
    // one would re-read them) and the new generation is expected instead.
    this.#expectRestart = true;
    return 'folded';
  }

  // Backfills with the write lock free: the helper pins the current end, and everything up to it is captured
  // before the engine's own pin is dropped for a PASSIVE checkpoint and taken again. 'folded' when that folded the
  // whole -wal and nothing was committed since, so the writer may reset it; 'aborted' when the generation moved
  // meanwhile. The helper is released either way.
  async #backfillPinned(conn: CaptureConnection, helper: CaptureConnection): Promise<'folded' | 'partial' | 'aborted'> {
    await helper.lock();
    try {
      if (!(await this.#captureToIndexEnd())) return 'aborted';
      const result = this.#passiveCheckpoint(conn);
      await conn.lock();
      // The engine's new pin may sit past what was captured: capture up to it before the helper lets go.
      if (!(await this.#captureToIndexEnd())) return 'aborted';
      const whole = result.busy === 0 && result.checkpointed === result.log && result.log === this.#framesConsumed();
      return whole ? 'folded' : 'partial';
    } finally {
      helper.unlock();
    }
  }

  // Folds the frames committed since the backfill while the helper holds the write lock, so that nothing can be
  // committed or reset meanwhile; the engine is pinned again before the lock is released. The writer waits only for
  // a handful of frames, never for a reader. The lock is held only within synchronous code: a writer on this thread
  // (or anything else the event loop runs) can never wait for it. False when the lock stayed taken or a reader pins
  // an old snapshot.
  async #foldUnderWriteLock(conn: CaptureConnection, helper: CaptureConnection): Promise<boolean> {
    const deadline = Date.now() + WRITE_LOCK_BUDGET_MS;
    while (!helper.tryWriteLock()) {
      if (Date.now() >= deadline) {
        this.#log(`takeover of ${this.#dbPath} postponed: the write lock stayed taken`);
        return false;
      }
      await sleep(1);
    }
    const reader = this.#requireReader();
    // Read under the lock, applied after it: once read, a frame no longer needs the -wal.
    const read: WalTransaction[] = [];
    let result: CheckpointResult | undefined;
    let pinned = true;
    let overran = false;
    let restarted: WalRestartedError | undefined;
    try {
      const index = readWalIndexHeader(this.#shmPath);
      if (index !== undefined && sameGeneration(index, reader.salts)) {
        try {
          while (this.#frameAt(reader.offset) < index.mxFrame) {
            const txn = reader.nextSync();
            if (txn === undefined) break;
            overran = this.#frameAt(txn.endOffset) > index.mxFrame;
            if (overran) break;
            read.push(txn);
          }
        } catch (err) {
          if (!isWalRestarted(err)) throw err;
          restarted = err as WalRestartedError;
        }
        if (this.#frameAt(reader.offset) === index.mxFrame) {
          result = this.#passiveCheckpoint(conn);
          // The lock is often won just as a writer commits, while its statement still holds the read mark its
          // transaction began at, for microseconds: a partial fold is retried a few times before giving up.
          for (let i = 0; i < FOLD_RETRIES && result.busy === 0 && result.checkpointed < result.log; i++) {
            Atomics.wait(pause, 0, 0, FOLD_RETRY_MS);
            result = conn.passiveCheckpoint();
          }
          pinned = conn.tryLock();
        }
      }
    } finally {
      helper.unlock();
    }
    for (const txn of read) await this.#apply(txn);
    if (restarted !== undefined) {
      await this.#onRestart(restarted);
      return false;
    }
    if (overran) {
      await this.#rebase('the WAL reader ran past the last committed frame');
      return false;
    }
    if (!pinned) {
      // Unpinned for a moment: a reset in it is not the expected one, so it is followed by a rebase.
      await conn.lock();
      return false;
    }
    if (result === undefined) {
      this.#log(`takeover of ${this.#dbPath} postponed: the -wal did not match its wal-index under the write lock`);
      return false;
    }
    if (result.busy === 0 && result.checkpointed === result.log && result.log === this.#framesConsumed()) return true;
    this.#log(
      `takeover of ${this.#dbPath} postponed: a reader still needs frames of the -wal ` +
        `(${result.checkpointed} of ${result.log} frames folded, ${this.#framesConsumed()} captured)`,
    );
    return false;
  }

  // A PASSIVE checkpoint on the engine's connection, whose pin is dropped for it only; the caller pins again.
  #passiveCheckpoint(conn: CaptureConnection): CheckpointResult {
    conn.unlock();
    return conn.passiveCheckpoint();
  }

  // Captures every transaction up to the wal-index's last committed frame as read on entry. False when the
  // generation moved meanwhile (the step followed or rebased) or the index did not settle within settleMs.
  async #captureToIndexEnd(settleMs = SETTLE_BUDGET_MS): Promise<boolean> {
    const salts = this.#requireReader().salts;
    const deadline = Date.now() + settleMs;
    let index = readWalIndexHeader(this.#shmPath);
    while (index === undefined) {
      if (Date.now() >= deadline) return false;
      await sleep(1);
      index = readWalIndexHeader(this.#shmPath);
    }
    if (!sameGeneration(index, salts)) return false;
    while (this.#framesConsumed() < index.mxFrame) {
      const step = await this.#step();
      if (step === 'regenerated') return false;
      if (step === 'idle') {
        if (Date.now() >= deadline) return false;
        await sleep(1);
      }
    }
    return true;
  }

  // Why the generation may have changed while the read lock was released, or undefined if it provably did not.
  // Without this, a commit, a full backfill and new commits (a foreign reset) could leave RESTART a count that
  // matches ours by coincidence, for frames we never saw.
  #resetWhileUnlocked(locked: WalIndexHeader | undefined): string | undefined {
    const now = readWalIndexHeader(this.#shmPath);
    if (locked === undefined || now === undefined) return 'the wal-index could not be read around RESTART';
    const bound = this.#reader?.salts;
    if (!sameGeneration(locked, now) || (bound !== undefined && !sameGeneration(bound, locked))) {
      return 'the WAL was reset while the read lock was released';
    }
    return undefined;
  }

  // Commits that landed while the read lock was released were folded by RESTART; within one generation their frames
  // stay in the -wal until a writer resets it, and every frame up to RESTART's count is committed. Reading them back
  // is cheaper than a rebase, and the reader's salt and checksum checks notice any frame a reset has overwritten.
  async #catchUp(log: number, generation: WalSalts | undefined): Promise<boolean> {
    const reader = this.#requireReader();
    while (this.#framesConsumed() < log) {
      let txn;
      try {
        txn = await reader.next();
      } catch (err) {
        if (isWalRestarted(err)) return false;
        throw err;
      }
      if (txn === undefined || !sameGeneration(reader.salts, generation) || this.#frameAt(txn.endOffset) > log)
        return false;
      await this.#apply(txn);
    }
    return this.#framesConsumed() === log;
  }

  async #rebase(reason: string): Promise<void> {
    const conn = this.#requireConn();
    // A lost chain can be the contract broken (a rollback-mode writer): a rebase would copy whatever it left.
    this.#checkContract();
    this.#log(`rebasing capture of ${this.#dbPath}: ${reason}`);
    this.#expectRestart = false;
    this.#helper?.unlock();
    conn.unlock();
    const result = await conn.checkpoint('TRUNCATE');
    if (result.busy !== 0) {
      throw fail(
        'BUSY',
        `cannot rebase capture of ${this.#dbPath}: wal_checkpoint(TRUNCATE) stayed busy for ${LOCK_BUDGET_MS / 1000} s`,
        {
          retryable: true,
          hint: 'end long-running transactions on the checkout, then reopen the session',
        },
      );
    }
    // Locked before the copy: right after TRUNCATE our snapshot sits at mark 0, which blocks any backfill, so the
    // main file is frozen; had a commit slipped in, mark > 0 blocks a reset and the fresh reader replays it.
    await conn.lock();
    const snapshot = join(this.#scratchDir, SNAPSHOT_FILE);
    await copyMainFile(this.#dbPath, snapshot);
    await this.#sink.rebase(snapshot);
    this.#reader = this.#freshReader();
    this.#consumedOff = 0;
    this.#deadTail = 0;
    this.#captured = 0;
    this.#framesAtTakeover = 0;
    this.#rebases++;
    await this.#saveState(false);
  }

  // A volatile engine's state would only ever be read by a start in the same directory, which never happens: its
  // writes (two at a clean stop, each a temp file and a rename) would cost the close and be removed unread.
  async #saveState(clean: boolean, mainFp?: Fingerprint): Promise<void> {
    if (this.#volatileState) return;
    const salts = this.#reader?.salts;
    await saveCaptureState(this.#scratchDir, {
      off: this.#consumedOff,
      salt1: salts?.salt1 ?? 0,
      salt2: salts?.salt2 ?? 0,
      clean,
      ...(mainFp === undefined ? {} : { main_fp: mainFp }),
    });
    this.#stateSaves++;
  }

  // A clean stop asked to keep its connection hands the main one to the process's kept connections (see
  // keepConnections): the checkout's next reader (the re-stamp, a diff) reads through it instead of opening its own.
  async #shutdown(
    beforeBackdate: Promise<unknown> | undefined,
    keep: boolean,
  ): Promise<{ clean: boolean; kept?: true }> {
    const conn = this.#conn;
    if (this.#failure !== undefined || conn === undefined) return { clean: false };
    let clean = false;
    try {
      const verdict = await this.#shutdownSteps(conn, Date.now() + SHUTDOWN_BUDGET_MS, beforeBackdate);
      if (verdict !== undefined) this.#log(`capture of ${this.#dbPath} did not stop clean: ${verdict}`);
      clean = verdict === undefined;
    } catch (err) {
      this.#log(`capture of ${this.#dbPath} did not stop clean: ${(err as Error).message}`);
    }
    if (!(clean && keep)) {
      this.#closeConnection();
      return { clean };
    }
    return this.#keepConnection(conn) ? { clean, kept: true } : { clean };
  }

  // The helper closes (never the last connection: it drops no lock), the main connection is kept with the shared
  // descriptors, which are given back only once it is closed.
  #keepConnection(conn: CaptureConnection): boolean {
    const helper = this.#helper;
    this.#conn = undefined;
    this.#helper = undefined;
    try {
      helper?.close();
      const fd = dbFileFd(this.#dbPath);
      const path = this.#dbPath;
      return putKept(path, { db: conn.handOver(), fd, closeFd: () => releaseDbFiles(path) });
    } catch (err) {
      this.#log(`keeping the capture connection to ${this.#dbPath} failed: ${(err as Error).message}`);
      conn.close();
      return false;
    }
  }

  // Returns why the shutdown is not clean, or undefined once {clean: true} is saved.
  async #shutdownSteps(
    conn: CaptureConnection,
    deadline: number,
    beforeBackdate: Promise<unknown> | undefined,
  ): Promise<string | undefined> {
    const left = (): number => Math.max(0, deadline - Date.now());
    try {
      await this.#drainFor(Math.min(DRAIN_BUDGET_MS, left()));
    } finally {
      await this.#saveState(false);
    }
    const consumed = this.#framesConsumed();
    const locked = readWalIndexHeader(this.#shmPath);
    conn.unlock();
    const restart = await conn.checkpoint('RESTART', left());
    if (restart.busy !== 0) return 'wal_checkpoint(RESTART) stayed busy';
    const reset = this.#resetWhileUnlocked(locked);
    if (reset !== undefined) return reset;
    if (restart.log !== consumed && !(await this.#catchUp(restart.log, locked))) {
      return `RESTART folded ${restart.log} frames, ${consumed} were captured, and the rest could not be read back`;
    }
    if (beforeBackdate !== undefined) {
      try {
        await beforeBackdate;
      } catch (err) {
        return `what had to land before the backdate failed: ${(err as Error).message}`;
      }
    }
    // Stamped before the checks and TRUNCATE and compared after them: a commit that TRUNCATE folds right after the
    // race check (or a foreign commit plus checkpoint before the lock) writes the main file, which stamps the current
    // time over the backdated mtime, so no window is left (and no read of the file, whatever its size).
    const before = this.#backdateMain();
    if (before === undefined) return 'the main file was written while shutdown stamped it';
    const raced = await this.#walRacedSinceRestart(this.#framesConsumed(), this.#reader?.salts);
    if (raced !== undefined) return raced;
    const truncate = await conn.checkpoint('TRUNCATE', left());
    if (truncate.busy !== 0) return 'wal_checkpoint(TRUNCATE) stayed busy';
    // Under the read lock with an empty -wal our snapshot sits at mark 0, which blocks any backfill: main is frozen.
    await conn.lock(left());
    if (walBytes(this.#dbPath) !== 0) return 'a commit landed right after TRUNCATE';
    if (!this.#unchangedSince(before)) return 'the main file changed during shutdown';
    await this.#saveState(true, before);
    this.#stoppedFingerprint = before;
    return undefined;
  }

  // Moves the main file's mtime a minute into the past (never to the one its sidecar records) and returns its
  // fingerprint; undefined when a write stamped the file between the two (its mtime is then not the one set).
  #backdateMain(): Fingerprint | undefined {
    const past = stopStampSeconds(this.#dbPath, Date.now());
    utimesSync(this.#dbPath, past, past);
    const fp = fingerprintOf(this.#dbPath);
    return BigInt(fp.mtime_ns) === BigInt(past) * 1_000_000_000n ? fp : undefined;
  }

  #unchangedSince(fp: Fingerprint): boolean {
    return stillFingerprinted(this.#dbPath, fp);
  }

  // RESTART's count proves nothing was folded unseen before it; this proves nothing was written after it.
  async #walRacedSinceRestart(consumed: number, salts: WalSalts | undefined): Promise<string | undefined> {
    const size = walBytes(this.#dbPath);
    if (size === 0) return salts === undefined ? undefined : 'the -wal was truncated by another connection';
    const scan = await readAllTransactions(this.#walPath, this.#pageSize);
    if (scan.header === undefined) return 'the -wal header is torn';
    if (salts !== undefined && (scan.header.salt1 !== salts.salt1 || scan.header.salt2 !== salts.salt2)) {
      return 'the WAL was reset after RESTART';
    }
    // A complete transaction past the wal-index's last commit is a killed writer's, which no reader will ever see
    // and the next commit overwrites; one that is still being committed changes the main file between the stamp and the check.
    const index = readWalIndexHeader(this.#shmPath);
    const committed = scan.transactions.filter(
      (t) => !sameGeneration(index, scan.header) || this.#frameAt(t.endOffset) <= (index?.mxFrame ?? 0),
    );
    const frames = committed.reduce((n, t) => n + t.frames.length, 0);
    if (frames > consumed) return `the -wal holds ${frames} committed frames, ${consumed} were captured`;
    return undefined;
  }
}
