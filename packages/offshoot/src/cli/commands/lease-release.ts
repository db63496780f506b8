import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { leaseReleaseOutcome } from '../output.js';

/** `offshoot lease release <db>[@b]`: clears a branch's lease, whoever holds it. */
export const leaseReleaseCommand: Command = {
  name: 'lease release',
  summary: 'release a branch lease',
  usage: '<db>[@branch]',
  help: "Clears the lease holder and expiry (whoever holds it) and restarts the branch's TTL clock.",
  flags: {},
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ctx = await inv.context();
    const { releaseLease } = await import('../../ops/lease.js');
    await releaseLease(ctx, t);
    return leaseReleaseOutcome(t);
  },
};
