import { connect, type Client, type SessionInfo } from '@offshoot/client';
import { HUMAN, type Actor } from '../../ops/policy.js';

/** A daemon a tool call rides: a connection that states who asks, and the socket it reached. */
export interface LinkedDaemon {
  client: Client;
  socket: string;
}

/** A daemon that answered a status request during this call, with the sessions it has open. */
export interface RiddenDaemon extends LinkedDaemon {
  sessions: SessionInfo[];
}

const PROBE_MS = 2000;

/** The daemon's sessions, by a status request on `client`; rejects when no answer comes in time. */
export async function probeSessions(client: Client): Promise<SessionInfo[]> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    client.status(),
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
    return { client, socket, sessions: await probeSessions(client) };
  } catch {
    client?.close();
    return undefined;
  }
}
