import { connect, type Client, type SessionInfo } from '@offshoot/client';
import { fail } from '../core/errors.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import { HUMAN, type Actor } from '../ops/helpers/safety/policy.js';
import { processAlive } from '../platform/process-alive.js';
import { daemonLockPath, readDaemonLock } from '../protocol/daemon-lock-file.js';
import type { McpDeps } from './deps.js';

/** A daemon that answered a status probe, with the sessions it has open. */
export interface RiddenDaemon {
  client: Client;
  socket: string;
  sessions: SessionInfo[];
}

const PROBE_MS = 2000;

/**
 * Probes the daemon at `socket` with a fresh status request; undefined when nothing answers in time, in which case
 * the tool works at rest. Every request on the connection says who asks (`actor`), so the daemon applies the same
 * agent rules the verbs apply at rest. The caller closes the client.
 */
export async function reachDaemon(socket: string, actor: Actor = HUMAN): Promise<RiddenDaemon | undefined> {
  let client: Client | undefined;
  try {
    const who = actor.kind === 'agent' ? { actor: 'agent' as const, allowForce: actor.allowForce } : {};
    client = await connect(socket, { connectTimeoutMs: PROBE_MS, ...who });
    let timer: NodeJS.Timeout | undefined;
    const sessions = await Promise.race([
      client.status(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('status probe timed out')), PROBE_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    return { client, socket, sessions };
  } catch {
    client?.close();
    return undefined;
  }
}

/** A live `offshoot serve` on this store (its lock under the checkout root names a live pid) that answers, if any. */
export async function servingDaemon(ctx: OpsContext, actor: Actor = HUMAN): Promise<RiddenDaemon | undefined> {
  const lock = await readDaemonLock(daemonLockPath(ctx.checkoutRoot));
  if (lock === undefined || lock.pid === process.pid || !processAlive(lock.pid)) return undefined;
  return reachDaemon(lock.socket, actor);
}

/**
 * The daemon the tools ride: the one at -socket (or OFFSHOOT_SOCKET) when the human named one; otherwise the daemon
 * serving this store, found through its lock as the reaper finds it, else whatever answers on the default socket.
 */
export async function findDaemon(deps: McpDeps): Promise<RiddenDaemon | undefined> {
  if (!deps.options.socketExplicit) {
    const ctx = await deps.ops().catch(() => undefined);
    const serving = ctx === undefined ? undefined : await servingDaemon(ctx, deps.actor);
    if (serving !== undefined) return serving;
  }
  return reachDaemon(deps.options.socket, deps.actor);
}

/** Runs fn with the daemon the tools ride (or undefined when none answers), closing the connection after. */
export async function withDaemon<T>(deps: McpDeps, fn: (d: RiddenDaemon | undefined) => Promise<T>): Promise<T> {
  const d = await findDaemon(deps);
  try {
    return await fn(d);
  } finally {
    d?.client.close();
  }
}

/** The daemon's session on db@branch, if it has one. */
export function sessionOn(d: RiddenDaemon | undefined, db: string, branch: string): SessionInfo | undefined {
  return d?.sessions.find((s) => s.db === db && s.branch === branch);
}

/**
 * Refuses a repoint or delete of a branch the daemon has a session on (healthy or fenced): the session still owns
 * it. `force` has no effect on this refusal; no tool ever closes a session.
 */
export function refuseIfSession(d: RiddenDaemon | undefined, db: string, branch: string, what: string): void {
  const s = sessionOn(d, db, branch);
  if (s === undefined) return;
  const state = s.error ? `a fenced session (${s.error})` : 'a live session';
  throw fail('SESSION_OPEN', `${what} ${db}@${branch}: the daemon has ${state} on it, held by ${s.holder}`, {
    hint: `close the session first (offshoot session close ${db}@${branch}), then retry; force does not override this`,
  });
}
