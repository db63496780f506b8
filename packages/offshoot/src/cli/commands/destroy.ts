import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { checkOutcome, destroyOutcome } from '../output.js';

/** `offshoot destroy <db>[@b] [--force]`: deletes a branch and its local checkout. */
export const destroyCommand: Command = {
  name: 'destroy',
  summary: 'delete a branch and its local checkout',
  usage: '<db>[@branch] [--force] [--check]',
  help: [
    'Claims the branch, makes sure nothing holds its checkout, deletes the ref, then the checkout files. Storage',
    'shared with forks lives on until gc finds it unreachable. Protected branches need --force, which also removes a',
    'ref too malformed to read. A live lease (a daemon session, another command) is never taken: close that session',
    'first (exit 6, busy, even with --force), and so is a checkout another connection is writing to. A checkout',
    'holding writes no checkpoint has goes with the branch: a warning (and "discarded" in --json) says what was',
    'discarded; with --actor agent that needs --force under --allow-force.',
    '--check only asks: whether this destroy, by whoever asks (--actor), would go ahead now.',
  ].join('\n'),
  examples: ['offshoot destroy app@attempt-1', 'offshoot destroy app --force'],
  flags: {
    force: {
      type: 'boolean',
      description: 'destroy a protected branch, or a malformed ref (never one under a live lease)',
    },
    check: {
      type: 'boolean',
      description: 'only check: run every refusal it would meet now, change nothing',
    },
  },
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ctx = await inv.context();
    const { checkDestroy, destroy } = await import('../../ops/destroy.js');
    const opts = { force: inv.flags.boolean('force'), actor: inv.actor };
    if (inv.flags.boolean('check')) {
      await checkDestroy(ctx, t, opts);
      return checkOutcome('destroy', t);
    }
    return destroyOutcome(await destroy(ctx, t, opts));
  },
};
