import { connect, type Client, type SessionInfo } from '@offshoot/client';
import { HUMAN, type Actor } from '../../ops/policy.js';

/** A daemon a tool call rides: a connection that states who asks, and the socket it reached. */
export interface LinkedDaemon {
  client: Client;
  socket: string;
}

/** What a status request says: the sessions the daemon has open, and the ephemeral branches it holds. */
export interface DaemonState {
  sessions: SessionInfo[];
  ephemeral: Array<{ db: string; branch: string }>;
}

/** A daemon that answered a status request during this call, with what it said. */
export interface RiddenDaemon extends LinkedDaemon, DaemonState {}

const PROBE_MS = 2000;

/** The daemon's sessions and ephemeral branches, by a status request on `client`; rejects when no answer comes in time. */
export async function probeSessions(client: Client): Promise<DaemonState> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    client.request({ op: 'status' }).then((res) => ({
      sessions: res.sessions ?? [],
      ephemeral: res.ephemeral_branches ?? [],
    })),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('status probe timed out')), PROBE_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

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
    return { client, socket, ...(await probeSessions(client)) };
  } catch {
    client?.close();
    return undefined;
  }
}
