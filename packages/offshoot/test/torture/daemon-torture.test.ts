// Daemon torture: a real `offshoot serve` process on a local store, a live session on db@main, and a stock sqlite3
// writer running a mixed script on the checkout, SIGKILLed mid-script in about half the rounds. After every round
// the head of the branch, restored through export, must `.dump` exactly what the writer had committed before the
// flush. Every 10th round the daemon is stopped with SIGTERM (its shutdown flush must keep the round's writes);
// every 25th it is SIGKILLed, under a running writer or in the middle of a flush, and a new daemon must take over
// the stale socket, the stale lock and (once it expires) the orphaned lease. Nothing the daemon reported durable
// may ever be lost; writes it never reported durable may be.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { makeStoreDir, sleep } from '../daemon/daemon-process.js';
import { Prng } from '../ops/prng.js';
import { LiveSession } from './live-session.js';
import { TORTURE_SCHEMA, dumpDifference, dumpOf, execSql, runWriter, writerScript } from './torture-writer.js';

const SECONDS = Number(process.env.OFFSHOOT_TORTURE_SECONDS ?? 25);
const SEED = Number(process.env.OFFSHOOT_TORTURE_SEED ?? Date.now() % 2 ** 31);
const GRACEFUL_EVERY = 10;
const DAEMON_KILL_EVERY = 25;
/** A killed daemon's lease expires this long after its last renewal, so a reopen waits about this long at most. */
const LEASE_TTL_MS = 1000;
/** Loops of the script for a writer that is to be killed: long enough that a 0–200 ms SIGKILL lands mid-script. */
const KILL_LOOPS = 100;
const DB = 'torture';

/** The state a restore of the head reproduces. */
interface Restored {
  txid: number;
  dump: string;
}

/** Where the run spent its time, in milliseconds. */
type Phase = 'writer' | 'dump' | 'flush' | 'verify' | 'restart' | 'lease';

class TortureRun {
  rounds = 0;
  killTries = 0;
  writerKills = 0;
  writerErrors = 0;
  graceful = 0;
  daemonKillsUnderWriter = 0;
  daemonKillsMidFlush = 0;
  midFlushLanded = 0;
  flushes = 0;
  shutdownFlushes = 0;
  checks = 0;
  readonly divergences: string[] = [];
  readonly time: Record<Phase, number> = { writer: 0, dump: 0, flush: 0, verify: 0, restart: 0, lease: 0 };
  private readonly rng = new Prng(SEED);
  private last: Restored = { txid: 0, dump: '' };
  /** Length of the daemon log when the current round began, to show what the daemon said during a divergent one. */
  private logMark = 0;

  constructor(
    private readonly live: LiveSession,
    private readonly restoreFile: string,
  ) {}

  async timed<T>(phase: Phase, fn: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.time[phase] += performance.now() - t0;
    }
  }

  /** Creates the table and makes it durable: the baseline every later check starts from. */
  async seed(): Promise<void> {
    execSql(this.live.path, TORTURE_SCHEMA);
    const committed = dumpOf(this.live.path);
    await this.live.flush();
    this.last = await this.verify(0, 'seed flush', [committed]);
  }

  /** Restores the head, compares it with the acceptable states, and returns what the head actually holds. */
  private async verify(round: number, step: string, acceptable: string[], txid?: number): Promise<Restored> {
    return this.timed('verify', async () => {
      this.checks++;
      const restoredTxid = await this.live.exportHead(this.restoreFile);
      const restored = { txid: restoredTxid, dump: dumpOf(this.restoreFile) };
      const durable = await this.live.durableTxid();
      if (txid !== undefined && restoredTxid !== txid) this.diverged(round, step, `the flush reported txid ${txid}, the head restores txid ${restoredTxid}`);
      if (durable !== restoredTxid) this.diverged(round, step, `status reports durable_txid ${String(durable)}, the head restores txid ${restoredTxid}`);
      if (!acceptable.includes(restored.dump)) {
        const want = acceptable[acceptable.length - 1] ?? '';
        this.diverged(round, step, `restore of txid ${restoredTxid} differs from what the writer committed: ${dumpDifference(want, restored.dump)}`);
      }
      return restored;
    });
  }

  private diverged(round: number, step: string, detail: string): void {
    const log = this.live.log().slice(this.logMark).trim();
    this.divergences.push(`round ${round}, ${step}: ${detail}\n  daemon log during the round:\n${log === '' ? '  (nothing)' : log.replace(/^/gm, '    ')}`);
  }

  /** After a restart: the reopened checkout must hold the durable head (re-materialized) or the writes it kept. */
  private async checkReopened(round: number, step: string, head: Restored, committed: string): Promise<void> {
    const reopened = await this.timed('dump', () => dumpOf(this.live.path));
    if (reopened !== head.dump && reopened !== committed) {
      this.diverged(round, `${step}: reopened checkout`, `neither the durable head nor what the writer committed: ${dumpDifference(head.dump, reopened)}`);
    }
  }

  async round(): Promise<void> {
    const r = ++this.rounds;
    this.logMark = this.live.log().length;
    const daemonKill = r % DAEMON_KILL_EVERY === 0 ? (this.rng.chance(0.5) ? 'writer' : 'flush') : undefined;
    const graceful = daemonKill === undefined && r % GRACEFUL_EVERY === 0;
    const killWriterAfter = this.rng.chance(0.5) ? this.rng.int(0, 199) : undefined;
    if (killWriterAfter !== undefined) this.killTries++;

    const long = killWriterAfter !== undefined || daemonKill === 'writer';
    const writer = runWriter(this.live.path, writerScript(long ? KILL_LOOPS : 1, true), killWriterAfter);
    if (daemonKill === 'writer') {
      await sleep(this.rng.int(0, 199));
      await this.live.kill();
      this.daemonKillsUnderWriter++;
    }
    const w = await writer;
    this.time.writer += w.ms;
    if (w.killed) this.writerKills++;
    if (w.stderr !== '') this.writerErrors++;
    // Nothing writes the checkout from here until the flush: this is exactly what a flush must make durable. A
    // writer that ran to the end dumped it itself; after a kill a separate sqlite3 process reads it.
    const finished = !w.killed && w.stdout.endsWith('COMMIT;\n');
    const committed = finished ? w.stdout : await this.timed('dump', () => dumpOf(this.live.path));

    if (daemonKill === 'writer') {
      await this.restart();
      // Nothing since the last flush was reported durable, so the head must be exactly the last flush.
      const head = await this.verify(r, 'daemon SIGKILLed under a writer', [this.last.dump]);
      await this.checkReopened(r, 'daemon SIGKILLed under a writer', head, committed);
      this.last = head;
    } else if (daemonKill === 'flush') {
      let acked: number | undefined;
      const flush = this.live.flush().then(
        (txid) => (acked = txid),
        () => undefined,
      );
      await sleep(this.rng.int(0, 60));
      await this.live.kill();
      await flush;
      this.daemonKillsMidFlush++;
      await this.restart();
      // An acknowledged flush is durable; one the kill interrupted may have landed or not, but never half.
      const head = await this.verify(r, `daemon SIGKILLed in a flush (${acked === undefined ? 'unacknowledged' : 'acknowledged'})`, acked === undefined ? [this.last.dump, committed] : [committed]);
      if (head.dump === committed) this.midFlushLanded++;
      await this.checkReopened(r, 'daemon SIGKILLed in a flush', head, committed);
      this.last = head;
    } else if (graceful) {
      this.graceful++;
      await this.timed('restart', () => this.live.stopGracefully());
      await this.restart();
      // The shutdown closed the session with a final flush: the round's writes must be durable.
      const head = await this.verify(r, 'graceful restart (shutdown flush)', [committed]);
      if (head.txid > this.last.txid) this.shutdownFlushes++;
      await this.checkReopened(r, 'graceful restart', head, committed);
      this.last = head;
    } else {
      const txid = await this.timed('flush', () => this.live.flush());
      this.flushes++;
      this.last = await this.verify(r, 'flush', [committed], txid);
    }
  }

  private async restart(): Promise<void> {
    await this.timed('restart', () => this.live.restart());
    this.time.lease += this.live.leaseWaitMs;
    if (this.live.leaseWaitMs > 0) this.time.restart -= this.live.leaseWaitMs;
  }

  /** After the run: the daemon is stopped and the at-rest CLI exports the head, which must be the last durable state. */
  finalCheck(exported: string): void {
    this.checks++;
    const dump = dumpOf(exported);
    if (dump !== this.last.dump) this.diverged(this.rounds, 'at-rest export after the last shutdown', dumpDifference(this.last.dump, dump));
  }

  summary(seconds: number): string {
    const s = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
    const t = this.time;
    // The daemon logs each flush's own duration: the rest of the client-side flush time is the round trip. The
    // first and last tenth show whether flushes slow down as the store fills.
    const inDaemon = this.live.logLines(/ flushed kind=manual /).map((l) => Number(/duration_seconds=([\d.]+)/.exec(l)?.[1] ?? 0) * 1000);
    const tenth = Math.max(1, Math.floor(inDaemon.length / 10));
    const median = (xs: number[]): string => `${([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0).toFixed(0)} ms`;
    return (
      `daemon torture: ${this.rounds} rounds in ${seconds.toFixed(0)}s (seed ${SEED}), ` +
      `${this.writerKills} writer kills (${this.killTries} tried), ` +
      `${this.graceful} graceful restarts, ${this.daemonKillsUnderWriter + this.daemonKillsMidFlush} daemon SIGKILLs ` +
      `(${this.daemonKillsUnderWriter} under a writer, ${this.daemonKillsMidFlush} mid-flush of which ${this.midFlushLanded} landed), ` +
      `${this.flushes + this.shutdownFlushes} flushes (${this.shutdownFlushes} by shutdowns), ${this.checks} restores checked, ` +
      `${this.writerErrors} writer errors, ${this.divergences.length} divergences; ` +
      `time: writer ${s(t.writer)}, dump ${s(t.dump)}, flush ${s(t.flush)}, restore+check ${s(t.verify)}, ` +
      `restarts ${s(t.restart)}, lease waits ${s(t.lease)}; median flush inside the daemon ${median(inDaemon)} (first tenth ${median(inDaemon.slice(0, tenth))}, last ${median(inDaemon.slice(-tenth))}); ` +
      `${this.live.staleLocks} store key locks left by killed daemons`
    );
  }
}

test(`daemon torture: SIGKILLed writers, graceful restarts and daemon SIGKILLs for ${SECONDS} s lose nothing durable`, { timeout: (SECONDS + 300) * 1000 }, async () => {
  const store = makeStoreDir();
  assert.equal(store.cli(['create', DB]).code, 0);
  // A SIGKILLed daemon cannot remove its session scratch directory: keep them all inside the test's own directory.
  const scratch = store.file('tmp');
  mkdirSync(scratch);
  const live = await LiveSession.start(store, DB, ['-flush-every', '0'], { OFFSHOOT_LEASE_TTL_MS: String(LEASE_TTL_MS), TMPDIR: scratch });
  const run = new TortureRun(live, store.file('restore.db'));
  const started = performance.now();
  try {
    await run.seed();
    const end = Date.now() + SECONDS * 1000;
    while (Date.now() < end) await run.round();
    await live.stopGracefully();
    const atRest = store.file('at-rest.db');
    const ex = store.cli(['export', DB, atRest]);
    assert.equal(ex.code, 0, ex.stderr);
    run.finalCheck(atRest);
  } finally {
    console.log(run.summary((performance.now() - started) / 1000));
    if (run.divergences.length > 0) console.log(['divergences:', ...run.divergences.slice(0, 10)].join('\n'));
    await live.stopGracefully().catch(() => undefined);
    store.cleanup();
  }
  assert.ok(run.rounds > 0, 'at least one round ran');
  assert.deepEqual(run.divergences, [], 'no restore ever differs from what was committed before its flush');
});
