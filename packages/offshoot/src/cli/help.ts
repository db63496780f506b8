import { globalFlags } from './argv.js';
import type { Command, CommandGroup, FlagSpec } from './command.js';
import { EXIT_CODES_HELP } from './exit-codes.js';
import { allCommands } from './registry.js';

const STORE_FLAG: FlagSpec = {
  type: 'string',
  value: 'SPEC',
  description:
    'the store: a path, file:///abs/path or s3://bucket[/prefix] (default $OFFSHOOT_STORE, else ./.offshoot)',
};

function flagRows(flags: Record<string, FlagSpec>): Array<[string, string]> {
  return Object.entries(flags).map(([name, f]) => {
    const spelled = name === 'help' ? '-h, --help' : `--${name}`;
    const left = f.type === 'string' ? `${spelled} ${f.value ?? 'VALUE'}` : spelled;
    return [left, f.description + (f.multiple ? ' (repeatable)' : '')];
  });
}

function table(rows: Array<[string, string]>): string[] {
  const width = Math.max(0, ...rows.map(([l]) => l.length)) + 2;
  return rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`);
}

function globalSection(): string[] {
  return ['global flags:', ...table(flagRows({ store: STORE_FLAG, ...globalFlags }))];
}

const FLAG_SPELLING = 'Flags take one dash or two (-at CP, --at CP, --at=CP) and may appear anywhere on the line.';

/** `offshoot <command> --help`. */
export function commandHelp(cmd: Command): string {
  const lines = [
    `usage: offshoot ${cmd.name}${cmd.usage ? ` ${cmd.usage}` : ''}`,
    '',
    `${cmd.summary}.`,
    '',
    cmd.help,
    '',
  ];
  if (Object.keys(cmd.flags).length > 0) lines.push('flags:', ...table(flagRows(cmd.flags)), '');
  lines.push('examples:', ...cmd.examples.map((e) => `  ${e}`), '');
  lines.push(...globalSection(), '', FLAG_SPELLING, EXIT_CODES_HELP);
  return lines.join('\n') + '\n';
}

/** `offshoot <group> --help`: the group's subcommands. */
export function groupHelp(group: CommandGroup): string {
  const rows = group.subcommands.map((c): [string, string] => [`${c.name}${c.usage ? ` ${c.usage}` : ''}`, c.summary]);
  const lines = [
    `usage: offshoot ${group.name} <${group.subcommands.map((c) => c.name.split(' ').pop()).join('|')}> ...`,
    '',
    `${group.summary}.`,
    '',
    'commands:',
    ...table(rows),
  ];
  lines.push('', `Run 'offshoot ${group.name} <subcommand> --help' for one of them.`);
  return lines.join('\n') + '\n';
}

/** Bare `offshoot` and `offshoot --help`: every command, the global flags and the environment. */
export function usageText(): string {
  const rows = allCommands().map((c): [string, string] => [c.name, c.summary]);
  return [
    'offshoot: branchable SQLite: copy-on-write forks, checkpoints, rollback and promote',
    '',
    'usage: offshoot [-store SPEC] <command> [args] [flags]   (offshoot --version, offshoot <command> --help)',
    '',
    'commands:',
    ...table(rows),
    '',
    ...globalSection(),
    '',
    FLAG_SPELLING,
    "Targets are db (branch main), db@branch, and for export and diff db@branch@checkpoint. Run 'offshoot <command> --help' for one command.",
    '',
    'environment:',
    '  OFFSHOOT_STORE         the store when -store is not given',
    '  OFFSHOOT_S3_ENDPOINT   S3-compatible endpoint URL; OFFSHOOT_S3_REGION (auto when an endpoint is set); OFFSHOOT_S3_PATH_STYLE=1',
    "  OFFSHOOT_CHECKOUTS     where an S3 store's checkouts live (default: a per-store directory in the user cache dir)",
    '  OFFSHOOT_SOCKET        the daemon socket when -socket is not given (default: derived from the canonical store)',
    '  OFFSHOOT_TOKEN         the bearer token of serve -http when -token is not given',
    "  OFFSHOOT_HOST          this machine's name in leases and locks, for humans (default: the host name)",
    '  OFFSHOOT_DEBUG=1       print a stack trace for internal errors',
    '  OFFSHOOT_SNAPSHOT_EVERY  at-rest twin of serve -snapshot-every: chains stay within it (default 16; at layout 3 below it, at most 8 members)',
    '  S3 credentials come from the AWS SDK default chain (environment, shared config, instance role).',
    '',
    EXIT_CODES_HELP,
    '',
  ].join('\n');
}
