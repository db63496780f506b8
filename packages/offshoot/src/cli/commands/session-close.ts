import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { sessionDoneOutcome } from '../output.js';

/** `offshoot session close <db>[@b]`: flushes, stops capture and releases the lease. */
export const sessionCloseCommand: Command = {
  name: 'session close',
  summary: 'flush and close an open session, releasing its lease',
  usage: '<db>[@branch] [-socket PATH]',
  help: [
    "Flushes the session's pending writes, stops capture and releases the branch lease; the checkout stays where it",
    'is. A fenced session is closed without flushing. Fails if no session is open on the branch.',
  ].join('\n'),
  examples: ['offshoot session close app@attempt-1'],
  flags: { socket: SOCKET_FLAG },
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const { withDaemon } = await import('../daemon-request.js');
    await withDaemon(inv, (c) => c.closeSession(t.db, t.branch));
    return sessionDoneOutcome({ db: t.db, branch: t.branch, closed: true });
  },
};
