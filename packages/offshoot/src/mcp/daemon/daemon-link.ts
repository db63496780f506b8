import type { SessionInfo } from '@offshoot/client';
import { fail } from '../../core/errors.js';
import type { OpsContext } from '../../ops/context.js';
import { HUMAN, type Actor } from '../../ops/policy.js';
import { processAlive } from '../../platform/process-alive.js';
import { daemonLockPath, type DaemonLockContent, readDaemonLock } from '../../protocol/daemon-lock-file.js';
import { type LinkedDaemon, reachDaemon, type RiddenDaemon } from './daemon-probe.js';
import type { TakenLink } from './daemon-links.js';
import type { McpDeps } from '../deps.js';

/** The lock of a live `offshoot serve` on this store (not this process), if any. */
async function servingLock(ctx: OpsContext): Promise<DaemonLockContent | undefined> {
  const lock = await readDaemonLock(daemonLockPath(ctx.checkoutRoot));
  if (lock === undefined || lock.pid === process.pid || !processAlive(lock.pid)) return undefined;
  return lock;
}

/** A live `offshoot serve` on this store (its lock under the checkout root names a live pid) that answers, if any. */
export async function servingDaemon(ctx: OpsContext, actor: Actor = HUMAN): Promise<RiddenDaemon | undefined> {
  const lock = await servingLock(ctx);
  return lock === undefined ? undefined : reachDaemon(lock.socket, actor);
}

/**
 * Where the tools look for a daemon, in order: the socket at -socket (or OFFSHOOT_SOCKET) when the human named one;
 * otherwise the daemon serving this store, found through its lock as the reaper finds it, then the default socket.
 * The lock is read on every call, so a daemon that took the store since the last call is the one ridden.
 */
async function candidates(deps: McpDeps): Promise<{ socket: string; pid: number | undefined }[]> {
  const fallback = { socket: deps.options.socket, pid: undefined };
  if (deps.options.socketExplicit) return [fallback];
  const ctx = await deps.ops().catch(() => undefined);
  const lock = ctx === undefined ? undefined : await servingLock(ctx);
  return lock === undefined ? [fallback] : [{ socket: lock.socket, pid: lock.pid }, fallback];
}

// Runs fn on the first candidate that answers (or on undefined, at rest), on a kept connection given back after.
async function ride<T>(
  deps: McpDeps,
  withSessions: boolean,
  fn: (link: TakenLink | undefined, socket: string) => Promise<T>,
): Promise<T> {
  for (const { socket, pid } of await candidates(deps)) {
    const link = await deps.links.take(socket, pid, deps.actor, withSessions);
    if (link === undefined) continue;
    // A kept connection serves calls of every tool: each says whose it is, for the daemon's branch log.
    link.client.origin = { surface: deps.origin.surface };
    try {
      return await fn(link, socket);
    } finally {
      link.give();
    }
  }
  return fn(undefined, deps.options.socket);
}

/**
 * Runs fn with the daemon the tools ride and the sessions it has open now (or undefined when none answers), for a
 * tool whose behaviour depends on a session: the session list is asked for on every such call.
 */
export function withDaemon<T>(deps: McpDeps, fn: (d: RiddenDaemon | undefined) => Promise<T>): Promise<T> {
  return ride(deps, true, (l, socket) =>
    fn(l && { client: l.client, socket, sessions: l.state?.sessions ?? [], ephemeral: l.state?.ephemeral ?? [] }),
  );
}

/** Runs fn with the daemon the tools ride (or undefined when none answers), without asking for its sessions. */
export function withLinkedDaemon<T>(deps: McpDeps, fn: (d: LinkedDaemon | undefined) => Promise<T>): Promise<T> {
  return ride(deps, false, (l, socket) => fn(l && { client: l.client, socket }));
}

/**
 * The daemon when it holds db@branch as an ephemeral branch, which only it can read or write: the tools then go
 * through it whatever the branch's sessions.
 */
export function holdingEphemeral(d: RiddenDaemon | undefined, db: string, branch: string): RiddenDaemon | undefined {
  return d?.ephemeral.some((e) => e.db === db && e.branch === branch) ? d : undefined;
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
