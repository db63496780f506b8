import { parseDuration } from '../../core/duration.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { leaseAcquireOutcome } from '../output.js';

/** `offshoot lease acquire <db>[@b] [--ttl d]`: claims or renews a branch lease as host/pid/id (a fresh random id, kept until --ttl). */
export const leaseAcquireCommand: Command = {
  name: 'lease acquire',
  summary: 'claim or renew a branch lease',
  usage: '<db>[@branch] [--ttl DURATION]',
  help: [
    'Acquires the branch lease as host/pid/<random id> (a fresh acquire bumps the epoch, fencing earlier writers), or',
    'extends our own live lease. The command exits immediately, so the lease lapses after --ttl (default 30s)',
    "unless something renews it. Refused while another holder's lease is live or the branch is being destroyed.",
  ].join('\n'),
  examples: ['offshoot lease acquire app@attempt-1 --ttl 5m'],
  flags: { ttl: { type: 'string', value: 'DURATION', description: 'lease length (default 30s)' } },
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ttl = inv.flags.string('ttl');
    if (ttl !== undefined) parseDuration(ttl);
    const [{ acquireLease }, { newDetachedLeaseHolder }] = await Promise.all([
      import('../../ops/lease.js'),
      import('../../ops/context.js'),
    ]);
    // The lease outlives this command, so it must not read as a gone process's lease to the next one.
    const ctx = { ...(await inv.context()), holder: newDetachedLeaseHolder() };
    return leaseAcquireOutcome(t, ctx.holder, await acquireLease(ctx, t, ttl));
  },
};
