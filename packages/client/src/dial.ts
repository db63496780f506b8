import { createConnection, type Socket } from 'node:net';
import { OffshootError } from './errors.js';
import type { WireOrigin } from './types.js';

/** Options for reaching the daemon. */
export interface ConnectOptions {
  /** How long to wait for the socket to accept; 5000 ms by default. */
  connectTimeoutMs?: number;
  /**
   * The store these requests are meant for, sent with every request so a daemon serving another store refuses them
   * instead of acting on the wrong data (see `WireRequest.store`).
   */
  store?: string;
  /**
   * Who asks, sent with every request: `agent` applies the agent rules (no force unless `allowForce`, the undo points
   * of protected branches left alone, uncheckpointed writes never discarded). Omitted means a human.
   */
  actor?: 'agent';
  /** With `actor: 'agent'`: the agent may force, as `offshoot mcp -allow-force` allows. */
  allowForce?: boolean;
  /**
   * Through what the calls come and the actor's tags (run id, agent name), sent with every request for the records
   * of the branch log: `{ surface: 'sdk:<adapter>/<framework>', meta: { run: '…' } }`. `sdk:typescript` by default.
   */
  origin?: WireOrigin;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** Connects to the daemon's unix socket, failing with CONNECTION_FAILED (retryable) when nothing answers. */
export function dial(socketPath: string, opts: ConnectOptions = {}): Promise<Socket> {
  const timeoutMs = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const failed = (why: string, cause?: unknown): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(
        new OffshootError('CONNECTION_FAILED', `daemon connection failed: ${socketPath}: ${why}`, {
          hint: "start the daemon with 'offshoot serve', or point at its socket (-socket / OFFSHOOT_SOCKET)",
          retryable: true,
          cause,
        }),
      );
    };
    const timer = setTimeout(() => failed(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.once('error', (err) => failed(err.message, err));
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
  });
}
