import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { leaseReleaseOutcome } from '../output.js';

/** `offshoot lease release <db>[@b] [--force]`: clears a branch's lease; a live session's needs --force. */
export const leaseReleaseCommand: Command = {
  name: 'lease release',
  summary: 'release a branch lease',
  usage: '<db>[@branch] [--force]',
  help: [
    "Clears the lease holder and expiry and restarts the branch's TTL clock. A lease held by a live daemon session",
    'needs --force (the session is then fenced at its next flush); one whose holder is provably gone does not.',
  ].join('\n'),
  examples: ['offshoot lease release app@attempt-1', 'offshoot lease release app --force'],
  flags: { force: { type: 'boolean', description: "release a live session's lease" } },
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ctx = await inv.context();
    const { releaseLease } = await import('../../ops/lease.js');
    await releaseLease(ctx, t, { force: inv.flags.boolean('force') });
    return leaseReleaseOutcome(t);
  },
};
