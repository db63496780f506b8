// Daemon torture: a real `offshoot serve` process on a local store with one live session per lane (each lane its own
// database), and a stock sqlite3 writer per lane running a mixed script on its checkout, SIGKILLed mid-script in
// about half the rounds. The lanes run their rounds in lockstep, concurrently, against the one daemon. After every
// round the head of each lane's branch, restored through export, must `.dump` exactly what its writer had
// committed before the flush. Every 10th step the daemon is stopped with SIGTERM (its shutdown flushes must keep
// every lane's writes); every 25th it is SIGKILLed, under running writers or in the middle of their flushes, and a
// new daemon must take over the stale socket, the stale lock and (once they expire) the orphaned leases. Nothing the
// daemon reported durable may ever be lost; writes it never reported durable may be.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { makeStoreDir, sleep } from '../daemon/daemon-process.js';
import { Prng } from '../ops/prng.js';
import { LiveDaemon } from './live-daemon.js';
import { TORTURE_SCHEMA, dumpDifference, dumpOf, execSql, runWriter, writerScript } from './torture-writer.js';

const SECONDS = Number(process.env.OFFSHOOT_TORTURE_SECONDS ?? 25);
const SEED = Number(process.env.OFFSHOOT_TORTURE_SEED ?? Date.now() % 2 ** 31);
/** Sessions served at once, each with its own writer: a round is one lane's turn of one step. */
const LANES = Number(process.env.OFFSHOOT_TORTURE_LANES ?? 4);
const GRACEFUL_EVERY = 10;
const DAEMON_KILL_EVERY = 25;
/** A killed daemon's leases expire this long after their last renewal, so a reopen waits about this long at most. */
const LEASE_TTL_MS = 1000;
/** Loops of the script for a writer that is to be killed: far longer than the 0–99 ms before its SIGKILL lands. */
const KILL_LOOPS = 100;

/** The state a restore of the head reproduces. */
interface Restored {
  txid: number;
  dump: string;
}

/** Where the run spent its time (wall clock of each step's phase, lanes overlapping), in milliseconds. */
type Phase = 'writer' | 'flush' | 'verify' | 'restart' | 'lease';

/** How a step ends for every lane: a flush, a graceful restart, or a daemon SIGKILL under the writers or the flushes. */
type Ending = 'flush' | 'graceful' | 'kill-writer' | 'kill-flush';

/** Counters of the whole run. */
class Tally {
  rounds = 0;
  steps = 0;
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
  readonly time: Record<Phase, number> = { writer: 0, flush: 0, verify: 0, restart: 0, lease: 0 };
}

/** One database with its own session, writer and model of what its head must restore to. */
class Lane {
  private last: Restored = { txid: 0, dump: '' };
  /** What the lane's writer committed this step: what its next flush must make durable. */
  private committed = '';

  constructor(
    readonly db: string,
    private readonly live: LiveDaemon,
    private readonly tally: Tally,
    private readonly rng: Prng,
    private readonly restoreFile: string,
    private readonly diverged: (lane: string, step: string, detail: string) => void,
  ) {}

  /** Creates the table and makes it durable: the baseline every later check starts from. */
  async seed(): Promise<void> {
    await execSql(this.live.path(this.db), TORTURE_SCHEMA);
    const committed = await dumpOf(this.live.path(this.db));
    await this.live.flush(this.db);
    this.last = await this.verify('seed flush', [committed]);
  }

  /** Runs this step's writer: a short script, or (about half the time, or under a daemon kill) a long one SIGKILLed. */
  async write(long: boolean): Promise<void> {
    const killAfter = this.rng.chance(0.5) ? this.rng.int(0, 99) : undefined;
    if (killAfter !== undefined) this.tally.killTries++;
    const w = await runWriter(
      this.live.path(this.db),
      writerScript(long || killAfter !== undefined ? KILL_LOOPS : 1, true),
      killAfter,
    );
    if (w.killed) this.tally.writerKills++;
    if (w.stderr !== '') this.tally.writerErrors++;
    // Nothing writes the checkout from here until the flush: this is exactly what a flush must make durable. A
    // writer that ran to the end dumped it itself; after a kill a separate sqlite3 process reads it.
    const finished = !w.killed && w.stdout.endsWith('COMMIT;\n');
    this.committed = finished ? w.stdout : await dumpOf(this.live.path(this.db));
  }

  /** A plain round: flush, then the head must restore to what the writer committed, at the flushed txid. */
  async flushAndCheck(): Promise<void> {
    const txid = await this.live.flush(this.db);
    this.tally.flushes++;
    this.last = await this.verify('flush', [this.committed], txid);
  }

  /** Starts a flush the daemon is about to be killed in; resolves with its txid if it was acknowledged. */
  flushUnderKill(): Promise<number | undefined> {
    return this.live.flush(this.db).then(
      (txid) => txid,
      () => undefined,
    );
  }

  /** After the daemon was SIGKILLed under the writer: nothing since the last flush was reported durable. */
  async checkAfterKillUnderWriter(): Promise<void> {
    const head = await this.verify('daemon SIGKILLed under a writer', [this.last.dump]);
    await this.checkReopened('daemon SIGKILLed under a writer', head);
    this.last = head;
  }

  /** After the daemon was SIGKILLed in a flush: an acknowledged flush is durable; an interrupted one all or nothing. */
  async checkAfterKillMidFlush(acked: number | undefined): Promise<void> {
    const step = `daemon SIGKILLed in a flush (${acked === undefined ? 'unacknowledged' : 'acknowledged'})`;
    const head = await this.verify(step, acked === undefined ? [this.last.dump, this.committed] : [this.committed]);
    if (head.dump === this.committed) this.tally.midFlushLanded++;
    await this.checkReopened(step, head);
    this.last = head;
  }

  /** After a graceful restart: the shutdown closed the session with a final flush, so the writes are durable. */
  async checkAfterGraceful(): Promise<void> {
    const head = await this.verify('graceful restart (shutdown flush)', [this.committed]);
    if (head.txid > this.last.txid) this.tally.shutdownFlushes++;
    await this.checkReopened('graceful restart', head);
    this.last = head;
  }

  /** After the run: the at-rest CLI's export of the head must be the last durable state. */
  async finalCheck(exported: string): Promise<void> {
    this.tally.checks++;
    const dump = await dumpOf(exported);
    if (dump !== this.last.dump)
      this.diverged(this.db, 'at-rest export after the last shutdown', dumpDifference(this.last.dump, dump));
  }

  /** Restores the head, compares it with the acceptable states, and returns what the head actually holds. */
  private async verify(step: string, acceptable: string[], txid?: number): Promise<Restored> {
    this.tally.checks++;
    const restoredTxid = await this.live.exportHead(this.db, this.restoreFile);
    const restored = { txid: restoredTxid, dump: await dumpOf(this.restoreFile) };
    const durable = await this.live.durableTxid(this.db);
    if (txid !== undefined && restoredTxid !== txid)
      this.diverged(this.db, step, `the flush reported txid ${txid}, the head restores txid ${restoredTxid}`);
    if (durable !== restoredTxid)
      this.diverged(
        this.db,
        step,
        `status reports durable_txid ${String(durable)}, the head restores txid ${restoredTxid}`,
      );
    if (!acceptable.includes(restored.dump)) {
      const want = acceptable[acceptable.length - 1] ?? '';
      this.diverged(
        this.db,
        step,
        `restore of txid ${restoredTxid} differs from what the writer committed: ${dumpDifference(want, restored.dump)}`,
      );
    }
    return restored;
  }

  /** After a restart: the reopened checkout must hold the durable head (re-materialized) or the writes it kept. */
  private async checkReopened(step: string, head: Restored): Promise<void> {
    const reopened = await dumpOf(this.live.path(this.db));
    if (reopened !== head.dump && reopened !== this.committed) {
      this.diverged(
        this.db,
        `${step}: reopened checkout`,
        `neither the durable head nor what the writer committed: ${dumpDifference(head.dump, reopened)}`,
      );
    }
  }
}

class TortureRun {
  readonly tally = new Tally();
  readonly lanes: Lane[];
  private readonly rng = new Prng(SEED);
  /** Length of the daemon log when the current step began, to show what the daemon said during a divergent one. */
  private logMark = 0;

  constructor(
    private readonly live: LiveDaemon,
    dbs: readonly string[],
    restoreFile: (db: string) => string,
  ) {
    this.lanes = dbs.map(
      (db, i) =>
        new Lane(db, live, this.tally, new Prng(SEED + 1 + i), restoreFile(db), (lane, step, detail) =>
          this.diverged(lane, step, detail),
        ),
    );
  }

  private diverged(lane: string, step: string, detail: string): void {
    const log = this.live.log().slice(this.logMark).trim();
    this.tally.divergences.push(
      `step ${this.tally.steps}, ${lane}, ${step}: ${detail}\n  daemon log during the step:\n${log === '' ? '  (nothing)' : log.replace(/^/gm, '    ')}`,
    );
  }

  private async timed<T>(phase: Phase, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.tally.time[phase] += performance.now() - t0;
    }
  }

  private all(fn: (lane: Lane) => Promise<void>): Promise<void> {
    return Promise.all(this.lanes.map(fn)).then(() => undefined);
  }

  /** One step: every lane writes, then every lane's round ends the same way. */
  async step(): Promise<void> {
    const n = ++this.tally.steps;
    this.logMark = this.live.log().length;
    const ending: Ending =
      n % DAEMON_KILL_EVERY === 0
        ? this.rng.chance(0.5)
          ? 'kill-writer'
          : 'kill-flush'
        : n % GRACEFUL_EVERY === 0
          ? 'graceful'
          : 'flush';
    const writers = this.timed('writer', () => this.all((l) => l.write(ending === 'kill-writer')));
    if (ending === 'kill-writer') {
      await sleep(this.rng.int(0, 199));
      await this.live.kill();
      this.tally.daemonKillsUnderWriter++;
    }
    await writers;
    if (ending === 'kill-writer') {
      await this.restart();
      await this.timed('verify', () => this.all((l) => l.checkAfterKillUnderWriter()));
    } else if (ending === 'kill-flush') {
      const flushes = this.lanes.map((l) => l.flushUnderKill());
      await sleep(this.rng.int(0, 60));
      await this.live.kill();
      const acked = await Promise.all(flushes);
      this.tally.daemonKillsMidFlush++;
      await this.restart();
      await this.timed('verify', () =>
        Promise.all(this.lanes.map((l, i) => l.checkAfterKillMidFlush(acked[i]))).then(() => undefined),
      );
    } else if (ending === 'graceful') {
      this.tally.graceful++;
      await this.timed('restart', () => this.live.stopGracefully());
      await this.restart();
      await this.timed('verify', () => this.all((l) => l.checkAfterGraceful()));
    } else {
      await this.timed('flush', () => this.all((l) => l.flushAndCheck()));
    }
    this.tally.rounds += this.lanes.length;
  }

  private async restart(): Promise<void> {
    await this.timed('restart', () => this.live.restart());
    this.tally.time.lease += this.live.leaseWaitMs;
    this.tally.time.restart -= this.live.leaseWaitMs;
  }

  summary(seconds: number): string {
    const s = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
    const t = this.tally;
    // The daemon logs each flush's own duration: the rest of the client-side flush time is the round trip. The
    // first and last tenth show whether flushes slow down as the store fills.
    const inDaemon = this.live
      .logLines(/ flushed kind=manual /)
      .map((l) => Number(/duration_seconds=([\d.]+)/.exec(l)?.[1] ?? 0) * 1000);
    const tenth = Math.max(1, Math.floor(inDaemon.length / 10));
    const median = (xs: number[]): string =>
      `${([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0).toFixed(0)} ms`;
    const restarts = t.graceful + t.daemonKillsUnderWriter + t.daemonKillsMidFlush;
    return (
      `daemon torture: ${t.rounds} rounds (${t.steps} steps of ${this.lanes.length} lanes) in ${seconds.toFixed(0)}s (seed ${SEED}), ` +
      `${t.writerKills} writer kills (${t.killTries} tried), ` +
      `${t.graceful} graceful restarts, ${t.daemonKillsUnderWriter + t.daemonKillsMidFlush} daemon SIGKILLs ` +
      `(${t.daemonKillsUnderWriter} under the writers, ${t.daemonKillsMidFlush} mid-flush; ${t.midFlushLanded} interrupted lane flushes landed), ` +
      `${t.flushes + t.shutdownFlushes} flushes (${t.shutdownFlushes} by shutdowns), ${t.checks} restores checked, ` +
      `${t.writerErrors} writer errors, ${t.divergences.length} divergences; ` +
      `step time: writers ${s(t.time.writer)}, flush+restore ${s(t.time.flush)}, restore after restarts ${s(t.time.verify)}, ` +
      `restarts ${s(t.time.restart)} (${restarts ? (t.time.restart / restarts).toFixed(0) : 0} ms each), lease waits ${s(t.time.lease)}; ` +
      `median flush inside the daemon ${median(inDaemon)} (first tenth ${median(inDaemon.slice(0, tenth))}, last ${median(inDaemon.slice(-tenth))}); ` +
      `${this.live.staleLocks} store key locks left by killed daemons`
    );
  }
}

test(`daemon torture: ${LANES} lanes of SIGKILLed writers, graceful restarts and daemon SIGKILLs for ${SECONDS} s lose nothing durable`, {
  timeout: (SECONDS + 300) * 1000,
}, async () => {
  const store = makeStoreDir();
  const dbs = Array.from({ length: LANES }, (_, i) => `torture${i}`);
  for (const db of dbs) assert.equal(store.cli(['create', db]).code, 0);
  const live = await LiveDaemon.start(store, dbs, ['-flush-every', '0'], {
    OFFSHOOT_LEASE_TTL_MS: String(LEASE_TTL_MS),
  });
  const run = new TortureRun(live, dbs, (db) => store.file(`restore-${db}.db`));
  const started = performance.now();
  try {
    await Promise.all(run.lanes.map((l) => l.seed()));
    const end = Date.now() + SECONDS * 1000;
    while (Date.now() < end) await run.step();
    await live.stopGracefully();
    for (const lane of run.lanes) {
      const atRest = store.file(`at-rest-${lane.db}.db`);
      const ex = store.cli(['export', lane.db, atRest]);
      assert.equal(ex.code, 0, ex.stderr);
      await lane.finalCheck(atRest);
    }
  } finally {
    console.log(run.summary((performance.now() - started) / 1000));
    if (run.tally.divergences.length > 0)
      console.log(['divergences:', ...run.tally.divergences.slice(0, 10)].join('\n'));
    await live.stopGracefully().catch(() => undefined);
    store.cleanup();
  }
  assert.ok(run.tally.rounds > 0, 'at least one round ran');
  assert.deepEqual(run.tally.divergences, [], 'no restore ever differs from what was committed before its flush');
});
