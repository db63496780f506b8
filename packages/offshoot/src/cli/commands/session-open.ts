import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { sessionOpenOutcome } from '../output.js';

/** `offshoot session open <db>[@b]`: opens a live session in the daemon and prints its checkout path. */
export const sessionOpenCommand: Command = {
  name: 'session open',
  summary: 'open a live session on a branch in the daemon',
  usage: '<db>[@branch] [-socket PATH]',
  help: [
    'Asks the daemon to lease the branch, check it out (reusing a clean checkout) and capture its writes live; prints',
    'the checkout path. Point any SQLite client at it; the daemon flushes in the background and on close.',
    'Refused when the branch is already open, leased elsewhere, or the daemon is shutting down. A checkout holding',
    'writes that were never made durable (its daemon was killed before flushing them) is kept first as the undo branch',
    '<branch>-pre-reopen (then -pre-reopen-2, ...), and a warning on stderr names it. A daemon that is still starting',
    "(say, 'offshoot serve &' on the line before) is waited for: a few seconds for its socket to appear, longer while",
    'its lock shows it starting.',
  ].join('\n'),
  examples: ['DB=$(offshoot session open app@attempt-1)'],
  flags: { socket: SOCKET_FLAG },
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const { withDaemon } = await import('../daemon-request.js');
    const session = await withDaemon(inv, (c) => c.open(t.db, t.branch), { waitForStart: true });
    return sessionOpenOutcome(t, session.path, session.warnings);
  },
};
