import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, ConnectOptions, OffshootError as ClientError } from '@offshoot/client';
import { type ErrorCode, fail, OffshootError } from '../core/errors.js';
import { processAlive } from '../platform/process-alive.js';
import { daemonLockPath, readDaemonLock } from '../protocol/daemon-lock-file.js';
import { resolveSocketPath } from '../protocol/socket-path.js';
import { s3ConfigFromEnv } from '../store/s3/s3-config.js';
import { canonicalStore, storeSocketKey } from '../store/store-spec.js';
import { checkoutRootFor } from './checkout-root.js';
import type { Invocation } from './command.js';

/** The socket this invocation uses: -socket, else $OFFSHOOT_SOCKET, else the store's (and endpoint's) default socket. */
export function socketFor(inv: Invocation): string {
  const key = storeSocketKey(inv.storeSpec(), s3ConfigFromEnv().endpoint);
  return resolveSocketPath(inv.flags.string('socket'), key);
}

/**
 * Whether this invocation's requests state its store, so a daemon serving another store refuses them: yes unless a
 * socket was named (-socket or $OFFSHOOT_SOCKET) and the store was not. A socket path alone is enough to reach a
 * daemon, from any directory; the ./.offshoot default of wherever the command runs is no store the user meant.
 */
function statesStore(inv: Invocation): boolean {
  const socketNamed = (inv.flags.string('socket') ?? '') !== '' || (process.env.OFFSHOOT_SOCKET ?? '') !== '';
  return inv.storeNamed || !socketNamed;
}

const UNREACHABLE = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'ENOTDIR']);

/**
 * How long a command that waits for a starting daemon (`session open`, pasted right after `offshoot serve &`) keeps
 * trying a socket that does not answer yet; while the store's daemon lock names a live process serving this socket
 * (it is starting: opening the store, recovering sessions) it waits up to the longer bound.
 */
const START_GRACE_MS = 10_000;
const STARTING_DAEMON_MS = 60_000;
const RETRY_MS = 50;

/** Whether err says nothing listens on the socket (yet), as against a socket that answered or cannot be used. */
function unreachable(err: unknown, fromClient: (e: unknown) => e is ClientError): boolean {
  if (!fromClient(err) || err.code !== 'CONNECTION_FAILED') return false;
  return UNREACHABLE.has((err.cause as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/** Whether the daemon lock under lockPath names a live process serving socket. */
async function daemonStarting(lockPath: string, socket: string): Promise<boolean> {
  const lock = await readDaemonLock(lockPath);
  return lock !== undefined && resolve(lock.socket) === resolve(socket) && processAlive(lock.pid);
}

/** Connects, trying again while nothing listens on the socket, up to the bound daemonStarting sets. */
async function connectWaiting(
  connect: (socket: string, opts: ConnectOptions) => Promise<Client>,
  fromClient: (e: unknown) => e is ClientError,
  socket: string,
  opts: ConnectOptions,
  lockPath: string,
): Promise<Client> {
  const started = Date.now();
  for (;;) {
    try {
      return await connect(socket, opts);
    } catch (err) {
      if (!unreachable(err, fromClient)) throw err;
      const bound = (await daemonStarting(lockPath, socket)) ? STARTING_DAEMON_MS : START_GRACE_MS;
      if (Date.now() - started >= bound) throw err;
      await sleep(RETRY_MS);
    }
  }
}

// The client's own failures become the CLI's classes; a daemon error keeps its code and hint, printed as
// `daemon: <message>` as the earlier CLI did.
function asCliError(err: unknown, socket: string, fromClient: (e: unknown) => e is ClientError): OffshootError {
  if (!fromClient(err)) return fail('INTERNAL', String(err), { cause: err });
  const errno = (err.cause as NodeJS.ErrnoException | undefined)?.code ?? '';
  switch (err.code) {
    case 'CONNECTION_FAILED':
      return UNREACHABLE.has(errno)
        ? fail('UNAVAILABLE', `no daemon is running at ${socket}`, {
            hint: `start one with 'offshoot serve -socket ${socket}', or pass the right -socket`,
          })
        : fail('UNAVAILABLE', `cannot reach the daemon at ${socket}: ${err.message}`, {
            hint: 'check the -socket path and its permissions',
            cause: err,
          });
    case 'CONNECTION_CLOSED':
      return fail('UNAVAILABLE', `the daemon at ${socket} closed the connection`, {
        retryable: true,
        hint: 'retry; the daemon may be shutting down',
      });
    case 'BAD_RESPONSE':
      return fail('INTERNAL', `the daemon at ${socket} sent a malformed response`, {
        hint: 'check that -socket names an offshoot daemon',
      });
    default:
      return new OffshootError(err.code as ErrorCode, `daemon: ${err.message}`, {
        ...(err.hint !== undefined ? { hint: err.hint } : {}),
        retryable: err.retryable,
      });
  }
}

/**
 * Runs fn against the daemon through the TypeScript client, on one connection that states this invocation's store
 * (a daemon serving another store refuses it), and turns every failure into the CLI's error classes. With
 * waitForStart, a socket that does not answer yet is tried again for a few seconds, longer while the store's daemon
 * is starting, before it counts as no daemon.
 */
export async function withDaemon<T>(
  inv: Invocation,
  fn: (client: Client, socket: string) => Promise<T>,
  opts: { waitForStart?: boolean } = {},
): Promise<T> {
  const socket = socketFor(inv);
  // Loaded here, not at start-up: only the commands that talk to a daemon pay for the client and node:net.
  const { connect, isOffshootError } = await import('@offshoot/client');
  const { surface, meta } = inv.origin();
  const connectOpts = {
    ...(statesStore(inv) ? { store: canonicalStore(inv.storeSpec()) } : {}),
    origin: { surface, ...(meta !== undefined ? { meta } : {}) },
  };
  let client: Client | undefined;
  try {
    client = opts.waitForStart
      ? await connectWaiting(
          connect,
          isOffshootError,
          socket,
          connectOpts,
          daemonLockPath(checkoutRootFor(inv.storeSpec())),
        )
      : await connect(socket, connectOpts);
    return await fn(client, socket);
  } catch (err) {
    throw asCliError(err, socket, isOffshootError);
  } finally {
    client?.close();
  }
}
