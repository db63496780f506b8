import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { protectOutcome } from '../output.js';

/** `offshoot unprotect <db>[@b]`: clears the protected flag. */
export const unprotectCommand: Command = {
  name: 'unprotect',
  summary: "clear a branch's protected flag",
  usage: '<db>[@branch]',
  help: [
    "Clears the branch's protected flag, so destroy and promote --onto no longer need --force. The TTL clock is left",
    'alone: a branch with a TTL is reaped once it runs out, and unprotect says when that now is (expires_at in --json).',
  ].join('\n'),
  examples: ['offshoot unprotect app@staging'],
  flags: {},
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ctx = await inv.context();
    const { setProtected } = await import('../../ops/protect.js');
    return protectOutcome(await setProtected(ctx, t, false, { actor: inv.actor }));
  },
};
