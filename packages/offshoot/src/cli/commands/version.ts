import { readFileSync } from 'node:fs';
import type { Command } from '../command.js';
import { versionOutcome } from '../output.js';

/** `offshoot version`: the package version, Node version and platform. */
export const versionCommand: Command = {
  name: 'version',
  summary: 'print the offshoot version and runtime',
  usage: '',
  help: 'Prints "offshoot <version> node<version> <os>/<arch>".',
  examples: ['offshoot version', 'offshoot --version'],
  flags: {},
  args: { min: 0, max: 0 },
  async run() {
    // The package manifest sits three levels up from both src/cli/commands and dist/cli/commands.
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return versionOutcome(pkg.version ?? 'dev');
  },
};
