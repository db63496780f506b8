import type { Command } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { sessionDbsOutcome } from '../output.js';

/** `offshoot session dbs`: the store's databases, as the daemon sees them. */
export const sessionDbsCommand: Command = {
  name: 'session dbs',
  summary: 'list databases through the daemon',
  usage: '[-socket PATH]',
  help: "Prints every database in the daemon's store, one per line, sorted.",
  examples: ['offshoot session dbs'],
  flags: { socket: SOCKET_FLAG },
  args: { min: 0, max: 0 },
  async run(inv) {
    const { withDaemon } = await import('../daemon-request.js');
    return sessionDbsOutcome(await withDaemon(inv, (c) => c.dbs()));
  },
};
