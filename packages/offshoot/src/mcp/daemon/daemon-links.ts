import type { Client } from '@offshoot/client';
import type { Actor } from '../../ops/policy.js';
import { type DaemonState, probeSessions, reachDaemon } from './daemon-probe.js';

/** Connections kept idle per daemon and actor: enough for an agent's parallel calls, few enough to be no burden. */
const IDLE_PER_DAEMON = 4;

/** A connection taken for one call, with the sessions (and ephemeral branches) when the call asked; `give` hands it back. */
export interface TakenLink {
  client: Client;
  state: DaemonState | undefined;
  give(): void;
}

interface Pool {
  /** The pid of the daemon the kept connections reach, when its lock named one. */
  pid: number | undefined;
  idle: Client[];
  /** Set once the pool was replaced or the links closed: connections given back to it are closed. */
  retired: boolean;
}

/**
 * The daemon connections the tools ride, kept from one call to the next for the life of the MCP server, per socket
 * and per stated actor (the connection states who asks). A call takes a connection of its own (concurrent calls
 * never queue behind each other) and gives it back; a connection that closed (the daemon stopped or restarted) or
 * reaches a daemon that is no longer the one the lock names is dropped, and the call dials afresh, as every call did
 * before. A fresh connection counts only once the daemon answered a status probe, so a daemon that does not answer
 * still leaves the tools at rest. A kept one is used without a probe unless the call needs the sessions: the daemon
 * answered on it last time and has not closed it since.
 */
export class DaemonLinks {
  readonly #pools = new Map<string, Pool>();
  #closed = false;

  /**
   * A connection to the daemon on `socket` (whose lock names `pid`, when known) for `actor`, with its sessions when
   * `withSessions`; undefined when nothing answers there.
   */
  async take(
    socket: string,
    pid: number | undefined,
    actor: Actor,
    withSessions: boolean,
  ): Promise<TakenLink | undefined> {
    const allowForce = actor.kind === 'agent' && actor.allowForce;
    const key = `${actor.kind}\n${allowForce}\n${socket}`;
    const pool = this.#pool(key, pid);
    for (let c = pool.idle.pop(); c !== undefined; c = pool.idle.pop()) {
      if (c.closed) continue;
      if (!withSessions) return taken(pool, c, undefined);
      const state = await probeSessions(c).catch(() => undefined);
      if (state !== undefined) return taken(pool, c, state);
      // Dropped by the daemon: it went away, and whichever serves now is dialled. Open but silent (the probe timed
      // out) or refusing: that daemon does not answer, and the call works at rest, as a fresh probe's would.
      const dropped = c.closed;
      c.close();
      if (!dropped) {
        retire(pool);
        this.#pools.delete(key);
        return undefined;
      }
    }
    const fresh = await reachDaemon(socket, actor);
    if (fresh === undefined) return undefined;
    return taken(pool, fresh.client, withSessions ? fresh : undefined);
  }

  /**
   * Closes the idle connections; one still in use is closed when its call gives it back, and so is one a call still
   * under way takes after this (the server stopped: nothing may keep the process alive).
   */
  close(): void {
    this.#closed = true;
    for (const pool of this.#pools.values()) retire(pool);
    this.#pools.clear();
  }

  // A lock naming another pid means another daemon took the store (on the same socket path): the kept ones go.
  #pool(key: string, pid: number | undefined): Pool {
    const pool = this.#pools.get(key);
    if (pool !== undefined && (pid === undefined || pool.pid === pid)) return pool;
    if (pool !== undefined) retire(pool);
    const fresh: Pool = { pid, idle: [], retired: this.#closed };
    if (!this.#closed) this.#pools.set(key, fresh);
    return fresh;
  }
}

function retire(pool: Pool): void {
  pool.retired = true;
  for (const c of pool.idle.splice(0)) c.close();
}

// Given back, a connection is kept for the next call unless it closed, its pool went or enough are kept already.
function taken(pool: Pool, client: Client, state: DaemonState | undefined): TakenLink {
  return {
    client,
    state: state && { sessions: state.sessions, ephemeral: state.ephemeral },
    give: () => {
      if (!pool.retired && !client.closed && pool.idle.length < IDLE_PER_DAEMON) pool.idle.push(client);
      else client.close();
    },
  };
}
