import type { Command } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { sessionStatusOutcome } from '../output.js';

/** `offshoot session status`: the daemon's open sessions. */
export const sessionStatusCommand: Command = {
  name: 'session status',
  summary: "list the daemon's open sessions",
  usage: '[-socket PATH]',
  help: [
    'One line per open session:',
    '  db@b durable=N epoch=N holder=H checkout=P lag=BYTES [last_flush=T] [age=D] [flush_error="…"] [ERROR="…"] unflushed=BYTES [evicted]',
    "lag is the bytes of the checkout's -wal that SQLite has written but capture has not read yet (near 0 unless the",
    'writer outpaces capture); unflushed is the bytes of pages captured but not yet flushed to the store, which is what',
    'a crash of the daemon now would leave only in the checkout. durable is the txid the store holds; age is the time',
    'since the last flush. flush_error is the last background flush failure (cleared by a later success); ERROR is a',
    "terminal error such as being fenced, shown until the session is closed. evicted: the daemon closed the session's",
    'descriptors to stay within serve -max-open; it keeps its lease and reconnects on its next write or request.',
  ].join('\n'),
  examples: ['offshoot session status', 'offshoot session status --json'],
  flags: { socket: SOCKET_FLAG },
  args: { min: 0, max: 0 },
  async run(inv) {
    const { withDaemon } = await import('../daemon-request.js');
    return sessionStatusOutcome(await withDaemon(inv, (c) => c.status()));
  },
};
