// A real `offshoot serve` process holding one live session, restartable both ways the torture needs: a graceful
// SIGTERM (the daemon closes the session with a final flush) and a SIGKILL (stale socket, stale lock and an orphaned
// lease left behind, which the next daemon must cope with).
import { readdirSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect, isOffshootError, type Client, type Session } from '@offshoot/client';
import { sleep, startDaemon, type DaemonProcess, type StoreDir } from '../daemon/daemon-process.js';

/** How long a reopen keeps retrying while the killed daemon's lease is still live. */
const REOPEN_DEADLINE_MS = 60_000;
const REOPEN_RETRY_MS = 25;
/** Older than the local backend's 30 s stale-lock threshold. */
const AGED_LOCK_MS = 120_000;

// The killed daemon may have died holding a key lock of the local store (a ref update: lease renewal, flush CAS).
// The backend breaks such a lock only once it is 30 s old; the daemon is provably dead, so its locks are aged past
// that instead of waited out, and the next writer breaks them through the backend's own stale-lock path.
function ageKeyLocks(dir: string): number {
  let aged = 0;
  const past = (Date.now() - AGED_LOCK_MS) / 1000;
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.lock') || path.basename(f) === 'daemon.lock') continue;
    utimesSync(path.join(dir, f), past, past);
    aged++;
  }
  return aged;
}

/** A daemon with one client connection and a session on db@main. */
export class LiveSession {
  /** Milliseconds the last open spent waiting for an orphaned lease to expire. */
  leaseWaitMs = 0;
  /** Store key locks the killed daemons left behind (aged so the next writer breaks them). */
  staleLocks = 0;
  /** Daemon logs of every process started so far, oldest first. */
  private readonly logs: string[] = [];

  private constructor(
    private readonly store: StoreDir,
    readonly db: string,
    private readonly flags: string[],
    private readonly env: NodeJS.ProcessEnv,
    private daemon: DaemonProcess,
    private client: Client,
    private session: Session,
  ) {}

  /** Starts a daemon on the store and opens a session on db@main. */
  static async start(store: StoreDir, db: string, flags: string[], env: NodeJS.ProcessEnv): Promise<LiveSession> {
    const daemon = await startDaemon(store, flags, env);
    const client = await connect(daemon.sock);
    return new LiveSession(store, db, flags, env, daemon, client, await client.open(db));
  }

  /** The session's checkout. */
  get path(): string {
    return this.session.path;
  }

  /** The running daemon's pid. */
  get pid(): number | undefined {
    return this.daemon.proc.pid;
  }

  /** Flushes the session; resolves with the durable txid. */
  flush(): Promise<number> {
    return this.session.flush();
  }

  /** The session's durable_txid as `status` reports it. */
  async durableTxid(): Promise<number | undefined> {
    return (await this.client.status()).find((s) => s.db === this.db && s.branch === 'main')?.durable_txid;
  }

  /** Restores the head of db@main into out (overwriting it) through the daemon; resolves with its txid. */
  exportHead(out: string): Promise<number> {
    return this.client.export(this.db, 'main', out, { force: true });
  }

  /** SIGTERM and wait: the daemon closes the session (final flush) and exits. */
  async stopGracefully(): Promise<number | null> {
    this.client.close();
    return this.daemon.stop();
  }

  /** SIGKILL and wait for the exit: nothing of the daemon gets to clean up. */
  async kill(): Promise<void> {
    this.client.close();
    this.daemon.proc.kill('SIGKILL');
    await this.daemon.exited;
    this.staleLocks += ageKeyLocks(this.store.store);
  }

  /** Starts a new daemon on the same socket and reopens the session, retrying while the old lease is live. */
  async restart(): Promise<void> {
    this.logs.push(this.daemon.stderr());
    this.daemon = await startDaemon(this.store, this.flags, this.env);
    this.client = await connect(this.daemon.sock);
    const t0 = performance.now();
    let waited = 0;
    for (;;) {
      try {
        this.session = await this.client.open(this.db);
        break;
      } catch (err) {
        const waitable = isOffshootError(err, 'LEASE_HELD') || isOffshootError(err, 'BUSY');
        if (!waitable || performance.now() - t0 > REOPEN_DEADLINE_MS) throw err;
        await sleep(REOPEN_RETRY_MS);
        waited = performance.now() - t0;
      }
    }
    this.leaseWaitMs = waited;
  }

  /** Everything the daemons logged so far, oldest first. */
  log(): string {
    return [...this.logs, this.daemon.stderr()].join('');
  }

  /** Every line the daemons logged that matches re. */
  logLines(re: RegExp): string[] {
    return this.log().split('\n').filter((l) => re.test(l));
  }
}
