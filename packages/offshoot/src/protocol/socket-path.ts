import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fail } from '../core/errors.js';
import { userCacheDir } from '../platform/user-cache-dir.js';

/**
 * The longest unix socket path that fits sockaddr_un (108 bytes including the terminating NUL on Linux). libuv
 * truncates a longer path silently, so the daemon would listen somewhere else than every client looks.
 */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * The daemon socket used when neither -socket nor $OFFSHOOT_SOCKET is given:
 * `<user cache dir>/offshoot/<16 hex of sha256(canonical store)>.sock`, so one store maps to one socket however it
 * is spelled, and two stores never share one (the earlier implementation hashed the spec as typed).
 */
export function defaultSocketPath(canonicalStore: string, env: NodeJS.ProcessEnv = process.env): string {
  const id = createHash('sha256').update(canonicalStore).digest('hex').slice(0, 16);
  return join(userCacheDir(env), 'offshoot', `${id}.sock`);
}

/** The socket a command talks to or serves on: the -socket flag, else $OFFSHOOT_SOCKET, else the default. */
export function resolveSocketPath(
  flag: string | undefined,
  canonicalStore: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (flag !== undefined && flag !== '') return flag;
  if (env.OFFSHOOT_SOCKET) return env.OFFSHOOT_SOCKET;
  return defaultSocketPath(canonicalStore, env);
}

/** Returns the path when it fits a unix socket address; refuses a longer one instead of letting it be truncated. */
export function checkSocketPath(path: string): string {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw fail(
      'INVALID_ARGUMENT',
      `socket path ${path} is ${bytes} bytes; a unix socket path may be at most ${MAX_SOCKET_PATH_BYTES}`,
      {
        hint: 'pass a shorter -socket path (or set OFFSHOOT_SOCKET), e.g. under /tmp',
      },
    );
  }
  return path;
}
