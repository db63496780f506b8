import type { FlagSpec } from './command.js';

// Apart from daemon-request.ts so that declaring the flag loads nothing: a command reaches the daemon client (and
// the hashing, lock-file and socket modules behind it) only when it runs.
/** The -socket flag of every command that talks to (or is) the daemon. */
export const SOCKET_FLAG: FlagSpec = {
  type: 'string',
  value: 'PATH',
  description:
    'the daemon socket (default $OFFSHOOT_SOCKET, else one derived from the canonical store under the user cache dir)',
};
