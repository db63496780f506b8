import { parseTtl } from '../../core/duration.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { touchOutcome } from '../output.js';

/** `offshoot touch <db>[@b] [--ttl d|none]`: restarts a branch's TTL clock. */
export const touchCommand: Command = {
  name: 'touch',
  summary: "reset a branch's activity clock, optionally setting or clearing its TTL",
  usage: '<db>[@branch] [--ttl DURATION|none]',
  help: [
    'Resets touched_at, the clock a TTL counts from; the only way to defer expiry on a branch nobody holds.',
    '--ttl sets a new TTL; "none" (or 0s) clears it; omitted keeps the current one.',
  ].join('\n'),
  examples: ['offshoot touch app@attempt-1', 'offshoot touch app@attempt-1 --ttl none'],
  flags: { ttl: { type: 'string', value: 'DURATION|none', description: 'set the TTL, or clear it with none' } },
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ttl = parseTtl(inv.flags.string('ttl'));
    const ctx = await inv.context();
    const { touch } = await import('../../ops/touch.js');
    return touchOutcome(await touch(ctx, t, ttl, { actor: inv.actor }));
  },
};
