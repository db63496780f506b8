import type { Command, CommandGroup } from './command.js';
import { checkoutCommand } from './commands/checkout.js';
import { checkpointCommand } from './commands/checkpoint.js';
import { compactCommand } from './commands/compact.js';
import { configCommand } from './commands/config.js';
import { createCommand } from './commands/create.js';
import { destroyCommand } from './commands/destroy.js';
import { diffCommand } from './commands/diff.js';
import { exportCommand } from './commands/export.js';
import { forkCommand } from './commands/fork.js';
import { gcCommand } from './commands/gc.js';
import { initCommand } from './commands/init.js';
import { leaseAcquireCommand } from './commands/lease-acquire.js';
import { logCommand } from './commands/log.js';
import { leaseListCommand } from './commands/lease-list.js';
import { leaseReleaseCommand } from './commands/lease-release.js';
import { mcpCommand } from './commands/mcp.js';
import { pathCommand } from './commands/path.js';
import { promoteCommand } from './commands/promote.js';
import { protectCommand } from './commands/protect.js';
import { queryCommand } from './commands/query.js';
import { rollbackCommand } from './commands/rollback.js';
import { serveCommand } from './commands/serve.js';
import { sessionBranchesCommand } from './commands/session-branches.js';
import { sessionCloseCommand } from './commands/session-close.js';
import { sessionDbsCommand } from './commands/session-dbs.js';
import { sessionFlushCommand } from './commands/session-flush.js';
import { sessionOpenCommand } from './commands/session-open.js';
import { sessionShutdownCommand } from './commands/session-shutdown.js';
import { sessionStatusCommand } from './commands/session-status.js';
import { statusCommand } from './commands/status.js';
import { touchCommand } from './commands/touch.js';
import { uiCommand } from './commands/ui.js';
import { unprotectCommand } from './commands/unprotect.js';
import { upgradeCommand } from './commands/upgrade.js';
import { versionCommand } from './commands/version.js';

/** A top-level entry: a command, or a group of subcommands. */
export type Entry = Command | CommandGroup;

/** `offshoot lease list|acquire|release`. */
const leaseGroup: CommandGroup = {
  name: 'lease',
  summary: 'list, acquire or release branch leases',
  subcommands: [leaseListCommand, leaseAcquireCommand, leaseReleaseCommand],
};

/** `offshoot session open|flush|status|close|shutdown|dbs|branches`: a running daemon's sessions. */
const sessionGroup: CommandGroup = {
  name: 'session',
  summary: 'open, flush, inspect and close live sessions in a running daemon',
  subcommands: [
    sessionOpenCommand,
    sessionFlushCommand,
    sessionStatusCommand,
    sessionCloseCommand,
    sessionShutdownCommand,
    sessionDbsCommand,
    sessionBranchesCommand,
  ],
};

/**
 * Every command, in the order usage lists them. Command modules hold only declarations; each loads the store and
 * its op with a dynamic import when it runs, so parsing and help stay fast. In the bundle (dist/cli.cjs) a module
 * reached only through `await import()`, and every npm package it imports, is evaluated only when that import runs:
 * keep a new command's heavy dependencies (MCP SDK, zod, S3 SDK, a web server) behind the `await import()` in its
 * run(), never in a static import of the command module (test/cli/lazy-load.test.ts checks the lean commands).
 */
export const ENTRIES: readonly Entry[] = [
  initCommand,
  createCommand,
  checkoutCommand,
  pathCommand,
  exportCommand,
  diffCommand,
  queryCommand,
  checkpointCommand,
  forkCommand,
  touchCommand,
  rollbackCommand,
  promoteCommand,
  compactCommand,
  destroyCommand,
  protectCommand,
  unprotectCommand,
  statusCommand,
  logCommand,
  gcCommand,
  upgradeCommand,
  configCommand,
  leaseGroup,
  serveCommand,
  mcpCommand,
  sessionGroup,
  uiCommand,
  versionCommand,
];

/** True for a group of subcommands. */
export function isGroup(e: Entry): e is CommandGroup {
  return 'subcommands' in e;
}

/** The top-level entry with this name. */
export function findEntry(name: string): Entry | undefined {
  return ENTRIES.find((e) => e.name === name);
}

/** Every leaf command, groups expanded. */
export function allCommands(): Command[] {
  return ENTRIES.flatMap((e) => (isGroup(e) ? e.subcommands : [e]));
}
