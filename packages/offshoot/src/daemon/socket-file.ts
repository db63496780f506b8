import { lstat, mkdir, rm, chmod } from 'node:fs/promises';
import { createConnection, type Server } from 'node:net';
import { dirname } from 'node:path';
import { fail } from '../core/errors.js';

const PROBE_TIMEOUT_MS = 1000;

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection(path);
    const done = (live: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(live);
    };
    // A listener that accepts but never answers is still a listener: timing out counts as live.
    const timer = setTimeout(() => done(true), PROBE_TIMEOUT_MS);
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/**
 * Makes the socket path free for a new listener. A socket file nobody answers on is the leftover of a daemon that
 * died and is removed; a live socket (another daemon) and a file that is not a socket are refused, never removed.
 */
export async function clearStaleSocket(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const st = await lstat(path).catch(() => undefined);
  if (st === undefined) return;
  if (!st.isSocket()) {
    throw fail('ALREADY_EXISTS', `${path} exists and is not a socket`, {
      hint: 'pass another -socket path, or move that file away',
    });
  }
  if (await answers(path)) {
    throw fail('BUSY', `socket ${path} is in use: another daemon is listening on it`, {
      hint: `use that daemon, stop it ('offshoot session shutdown -socket ${path}'), or pass another -socket`,
    });
  }
  await rm(path, { force: true });
}

/**
 * Listens on a unix socket that only its owner can use: bound under umask 077 (so it is never reachable by others,
 * even for an instant), then chmod 0600.
 */
export async function listenPrivate(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(
        fail('UNAVAILABLE', `listen on ${path}: ${err.message}`, { hint: 'pass another -socket path', cause: err }),
      );
    };
    server.once('error', onError);
    const old = process.umask(0o077);
    try {
      // The bind happens synchronously inside listen(), so the umask only needs to cover this call.
      server.listen(path, () => {
        server.off('error', onError);
        resolve();
      });
    } finally {
      process.umask(old);
    }
  });
  await chmod(path, 0o600);
}
