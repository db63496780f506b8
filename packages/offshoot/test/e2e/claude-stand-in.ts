// Stands in for Claude Code's `claude` in the docs' shell blocks: `claude mcp add NAME [-- ]CMD ARGS...` does what
// the host does with that server at first use (start it over pipes, initialize, list tools, call offshoot_list) and
// fails when the server does not come up. Every other claude command is refused, so a block that needs one is
// marked in the docs instead.
import { hostHandshake } from './mcp-host.js';

const argv = process.argv.slice(2);
if (argv[0] !== 'mcp' || argv[1] !== 'add') {
  process.stderr.write(
    `claude stand-in: only 'claude mcp add' is run by the docs test, not 'claude ${argv.join(' ')}'\n`,
  );
  process.exit(2);
}
const dash = argv.indexOf('--');
const server = dash >= 0 ? argv.slice(dash + 1) : argv.slice(3);
const [command, ...args] = server;
if (command === undefined) {
  process.stderr.write('claude stand-in: mcp add names no server command\n');
  process.exit(2);
}
const view = await hostHandshake(command, args, { cwd: process.cwd(), env: process.env });
process.stdout.write(
  `claude stand-in: ${command} ${args.join(' ')}: ${view.tools} tools, daemon sessions ${view.daemonSessions}\n`,
);
