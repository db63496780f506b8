import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { pathOutcome } from '../output.js';

/** `offshoot path <db>[@b]`: where the writable checkout lives, without materializing it. */
export const pathCommand: Command = {
  name: 'path',
  summary: 'print the writable checkout path without materializing it',
  usage: '<db>[@branch]',
  help: 'Prints checkouts/<db>/<branch>.db under the checkout root; the path is stable across rollback and promote.',
  examples: ['offshoot path app@attempt-1'],
  flags: {},
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ctx = await inv.context();
    const { checkoutPath } = await import('../../ops/context.js');
    return pathOutcome({ path: checkoutPath(ctx.checkoutRoot, t.db, t.branch) });
  },
};
