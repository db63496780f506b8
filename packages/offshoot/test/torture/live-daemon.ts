// A real `offshoot serve` process holding one live session per database, restartable both ways the torture needs:
// a graceful SIGTERM (the daemon closes every session with a final flush) and a SIGKILL (stale socket, stale lock
// and orphaned leases left behind, which the next daemon must cope with).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect, isOffshootError, type Client, type Session } from '@offshoot/client';
import { sleep, startDaemon, type DaemonProcess, type StoreDir } from '../daemon/daemon-process.js';

/** How long a reopen keeps retrying while the killed daemon's lease is still live. */
const REOPEN_DEADLINE_MS = 60_000;
const REOPEN_RETRY_MS = 25;

// Store key locks (a ref update the daemon died in: lease renewal, flush CAS) are left as they are: they name the
// dead pid, and the backend must break them at once for the next writer, or the reopen and flush time out BUSY.
function keyLocks(dir: string): number {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.lock') && path.basename(f) !== 'daemon.lock',
  ).length;
}

/** A client connection and the session it opened. */
interface Lane {
  client: Client;
  session: Session;
}

/**
 * A daemon with a session on db@main for each of its databases, each on its own connection: the daemon answers one
 * connection's requests in order, so lanes that share one would wait on each other.
 */
export class LiveDaemon {
  /** Milliseconds the last restart spent waiting for orphaned leases to expire. */
  leaseWaitMs = 0;
  /** Store key locks the killed daemons left behind (each broken by the next writer of its key). */
  staleLocks = 0;
  /** Daemon logs of every process started so far, oldest first. */
  private readonly logs: string[] = [];

  private constructor(
    private readonly store: StoreDir,
    private readonly flags: string[],
    private readonly env: NodeJS.ProcessEnv,
    private daemon: DaemonProcess,
    private readonly lanes: Map<string, Lane>,
  ) {}

  /** Starts a daemon on the store and opens a session on db@main of every database. */
  static async start(
    store: StoreDir,
    dbs: readonly string[],
    flags: string[],
    env: NodeJS.ProcessEnv,
  ): Promise<LiveDaemon> {
    const daemon = await startDaemon(store, flags, env);
    const live = new LiveDaemon(store, flags, env, daemon, new Map());
    await Promise.all(dbs.map((db) => live.reopen(db, performance.now())));
    return live;
  }

  private lane(db: string): Lane {
    const l = this.lanes.get(db);
    if (!l) throw new Error(`no session on ${db}`);
    return l;
  }

  /** The checkout of db's session. */
  path(db: string): string {
    return this.lane(db).session.path;
  }

  /** Flushes db's session; resolves with the durable txid. */
  flush(db: string): Promise<number> {
    return this.lane(db).session.flush();
  }

  /** The durable_txid of db's session as `status` reports it. */
  async durableTxid(db: string): Promise<number | undefined> {
    return (await this.lane(db).client.status()).find((s) => s.db === db && s.branch === 'main')?.durable_txid;
  }

  /** Restores the head of db@main into out (overwriting it) through the daemon; resolves with its txid. */
  exportHead(db: string, out: string): Promise<number> {
    return this.lane(db).client.export(db, 'main', out, { force: true });
  }

  /** SIGTERM and wait: the daemon closes every session (final flush) and exits. */
  async stopGracefully(): Promise<number | null> {
    this.closeClients();
    return this.daemon.stop();
  }

  /** SIGKILL and wait for the exit: nothing of the daemon gets to clean up. */
  async kill(): Promise<void> {
    this.closeClients();
    this.daemon.proc.kill('SIGKILL');
    await this.daemon.exited;
    this.staleLocks += keyLocks(this.store.store);
  }

  /** Starts a new daemon on the same socket and reopens every session, retrying while an old lease is live. */
  async restart(): Promise<void> {
    this.logs.push(this.daemon.stderr());
    this.daemon = await startDaemon(this.store, this.flags, this.env);
    const t0 = performance.now();
    const waits = await Promise.all([...this.lanes.keys()].map((db) => this.reopen(db, t0)));
    this.leaseWaitMs = Math.max(...waits);
  }

  private closeClients(): void {
    for (const { client } of this.lanes.values()) client.close();
  }

  /** Connects and (re)opens db's session; resolves with how long it waited for an old lease. */
  private async reopen(db: string, t0: number): Promise<number> {
    const client = await connect(this.daemon.sock);
    let waited = 0;
    for (;;) {
      try {
        this.lanes.set(db, { client, session: await client.open(db) });
        return waited;
      } catch (err) {
        // Only the lease is waited out: a key lock of the killed daemon must never make the reopen BUSY.
        const waitable = isOffshootError(err, 'LEASE_HELD');
        if (!waitable || performance.now() - t0 > REOPEN_DEADLINE_MS) {
          client.close();
          throw err;
        }
        await sleep(REOPEN_RETRY_MS);
        waited = performance.now() - t0;
      }
    }
  }

  /** Everything the daemons logged so far, oldest first. */
  log(): string {
    return [...this.logs, this.daemon.stderr()].join('');
  }

  /** Every line the daemons logged that matches re. */
  logLines(re: RegExp): string[] {
    return this.log()
      .split('\n')
      .filter((l) => re.test(l));
  }
}
