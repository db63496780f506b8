import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { RO_CACHE_BUDGET_FLAG } from '../ro-cache-budget.js';
import { compactOutcome } from '../output.js';

/** `offshoot compact <db>[@b]`: makes a shared fork self-contained. */
export const compactCommand: Command = {
  name: 'compact',
  summary: 'make a shared fork self-contained (a no-op if it already is)',
  usage: '<db>[@branch]',
  help: [
    "Copies the branch's head (and each checkpoint it keeps) into a fresh lineage and drops its base pointer, so the",
    'ancestor\'s storage can be reclaimed by gc. Adds checkpoint "compact". O(database size) by design. A dirty',
    "checkout is checkpointed first; with --actor agent that checkpoint is decided like an agent's checkpoint.",
  ].join('\n'),
  examples: ['offshoot compact app@attempt-1'],
  flags: { 'ro-cache-budget': RO_CACHE_BUDGET_FLAG },
  fillsRoCache: true,
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const ctx = await inv.context();
    const { compact } = await import('../../ops/compact.js');
    return compactOutcome(await compact(ctx, t, { actor: inv.actor }));
  },
};
