import type { Command } from '../command.js';
import { versionOutcome } from '../output.js';
import { packageVersion } from '../package-version.js';

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
    return versionOutcome(packageVersion());
  },
};
