import type { Command } from '../command.js';
import { leaseListOutcome } from '../output.js';

/** `offshoot lease list`: every branch that carries a lease. */
export const leaseListCommand: Command = {
  name: 'lease list',
  summary: "list every branch's lease, live or expired",
  usage: '',
  help: 'One line per leased branch: db@b held|expired by HOLDER epoch=N until TIME.',
  examples: ['offshoot lease list'],
  flags: {},
  args: { min: 0, max: 0 },
  async run(inv) {
    const ctx = await inv.context();
    const { listLeases } = await import('../../ops/lease.js');
    return leaseListOutcome(await listLeases(ctx));
  },
};
