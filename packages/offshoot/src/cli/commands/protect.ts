import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { protectOutcome } from '../output.js';

/** `offshoot protect <db>[@b]`: destroy and promote-onto then need --force. */
export const protectCommand: Command = {
  name: 'protect',
  summary: 'protect a branch: destroy and promote --onto it then need --force',
  usage: '<db>[@branch]',
  help: "Sets the branch's protected flag (main has it from create). Protected branches are never reaped. The TTL clock is left alone.",
  examples: ['offshoot protect app@staging'],
  flags: {},
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ctx = await inv.context();
    const { setProtected } = await import('../../ops/protect.js');
    return protectOutcome(await setProtected(ctx, t, true, { actor: inv.actor }));
  },
};
