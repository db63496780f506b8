import type { Command } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { sessionDoneOutcome } from '../output.js';

/** `offshoot session shutdown`: stops the daemon gracefully. */
export const sessionShutdownCommand: Command = {
  name: 'session shutdown',
  summary: 'stop the daemon gracefully',
  usage: '[-socket PATH]',
  help: 'Asks the daemon to shut down: it flushes and closes every open session, then exits. Returns once asked.',
  examples: ['offshoot session shutdown', 'offshoot session shutdown -socket /run/offshoot/app.sock'],
  flags: { socket: SOCKET_FLAG },
  args: { min: 0, max: 0 },
  async run(inv) {
    const { withDaemon } = await import('../daemon-request.js');
    const socket = await withDaemon(inv, async (c, at) => {
      await c.shutdown();
      return at;
    });
    return sessionDoneOutcome({ socket, shutdown: true });
  },
};
