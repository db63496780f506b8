import { validateName } from '../../core/names.js';
import type { Command } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { sessionBranchesOutcome } from '../output.js';

/** `offshoot session branches <db>`: a database's branches with the daemon's view of their state. */
export const sessionBranchesCommand: Command = {
  name: 'session branches',
  summary: "list a database's branches through the daemon",
  usage: '<db> [-socket PATH]',
  help: [
    'One line per branch: db@b state=S storage=shared|materialized txid=N checkpoints=[a,b] [protected] [ttl=X',
    'remaining=D|expired] [holder=H]. Besides the at-rest states, the daemon reports error (its session there has a',
    'terminal error) and pending (an open is in flight).',
  ].join('\n'),
  examples: ['offshoot session branches app'],
  flags: { socket: SOCKET_FLAG },
  args: { min: 1, max: 1 },
  async run(inv) {
    const db = validateName('database', inv.arg(0));
    const { withDaemon } = await import('../daemon-request.js');
    const r = await withDaemon(inv, (c) => c.branchReport(db));
    return sessionBranchesOutcome(db, r.branches, r.unreadable);
  },
};
