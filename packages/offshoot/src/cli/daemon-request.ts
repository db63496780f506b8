import type { Socket } from 'node:net';
import { fail, OffshootError } from '../core/errors.js';
import { errorFromResponse } from '../protocol/errors.js';
import { resolveSocketPath } from '../protocol/socket-path.js';
import type { Response } from '../protocol/wire.js';
import type { FlagSpec, Invocation } from './command.js';

/** The -socket flag of every command that talks to (or is) the daemon. */
export const SOCKET_FLAG: FlagSpec = {
  type: 'string',
  value: 'PATH',
  description:
    'the daemon socket (default $OFFSHOOT_SOCKET, else one derived from the store spec under the user cache dir)',
};

/** The socket this invocation uses: -socket, else $OFFSHOOT_SOCKET, else the store's default socket. */
export function socketFor(inv: Invocation): string {
  return resolveSocketPath(inv.flags.string('socket'), inv.storeSpec().text);
}

const UNREACHABLE = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'ENOTDIR']);

function exchange(
  createConnection: (path: string) => Socket,
  socket: string,
  req: Record<string, unknown>,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socket);
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      conn.destroy();
      fn();
    };
    conn.once('connect', () => conn.write(`${JSON.stringify(req)}\n`));
    conn.on('data', (chunk: Buffer) => {
      const nl = chunk.indexOf(10);
      if (nl < 0) {
        chunks.push(chunk);
        return;
      }
      chunks.push(chunk.subarray(0, nl));
      const text = Buffer.concat(chunks).toString('utf8');
      settle(() => {
        try {
          resolve(JSON.parse(text) as Response);
        } catch {
          reject(
            fail('INTERNAL', `the daemon at ${socket} sent a malformed response`, {
              hint: 'check that -socket names an offshoot daemon',
            }),
          );
        }
      });
    });
    conn.once('error', (err: NodeJS.ErrnoException) =>
      settle(() =>
        reject(
          UNREACHABLE.has(err.code ?? '')
            ? fail('UNAVAILABLE', `no daemon is running at ${socket}`, {
                hint: `start one with 'offshoot serve -socket ${socket}', or pass the right -socket`,
              })
            : fail('UNAVAILABLE', `cannot reach the daemon at ${socket}: ${err.message}`, {
                hint: 'check the -socket path and its permissions',
                cause: err,
              }),
        ),
      ),
    );
    conn.once('close', () =>
      settle(() =>
        reject(
          fail('UNAVAILABLE', `the daemon at ${socket} closed the connection`, {
            retryable: true,
            hint: 'retry; the daemon may be shutting down',
          }),
        ),
      ),
    );
  });
}

/**
 * Sends one request to the daemon over its unix socket and returns the response; a daemon error is thrown with its
 * code, hint and `daemon: ` message intact, so it prints and exits like any other failure of that class.
 */
export async function daemonRequest(socket: string, req: Record<string, unknown>): Promise<Response> {
  // node:net is loaded here, not at start-up: only the session commands talk to a daemon.
  const { createConnection } = await import('node:net');
  const res = await exchange(createConnection, socket, req);
  if (!res.ok) {
    const e = errorFromResponse(res);
    throw new OffshootError(e.code, res.error ?? e.message, {
      ...(e.hint !== undefined ? { hint: e.hint } : {}),
      retryable: e.retryable,
    });
  }
  return res;
}
