import { fail } from '../../core/errors.js';
import { parseTarget, validatePointName } from '../../core/target.js';
import type { Command } from '../command.js';
import { RO_CACHE_BUDGET_FLAG } from '../ro-cache-budget.js';
import { checkOutcome, rollbackOutcome } from '../output.js';

/** `offshoot rollback <db>[@b] --to <cp> [--materialize]`: repoints a branch at one of its checkpoints. */
export const rollbackCommand: Command = {
  name: 'rollback',
  summary: 'repoint a branch at one of its checkpoints; prints the checkout path',
  usage: '<db>[@branch] --to CP [--materialize] [--check]',
  help: [
    'Repoints the branch at a fresh lineage reading through the checkpoint (or a full copy with --materialize).',
    "Checkpoints at or below it are kept, later ones dropped. The previous head is kept first as the TTL'd branch",
    '<branch>-pre-rollback (the undo point); uncheckpointed checkout edits are checkpointed into it, never lost.',
    'Prints the refreshed checkout path; what was abandoned and the exact undo command (with the --force a protected',
    'branch needs; `undo` under --json) go to stderr. An existing branch of the undo',
    "point's name is replaced only if it is an undo point offshoot made and nobody has used since; otherwise the rollback",
    'is refused. A checkout busy with another connection cannot be refreshed: the branch still moves, nothing is printed',
    "on stdout, and the command exits 6 (busy) saying so; close the connection and run 'offshoot checkout'.",
    '--to takes a checkpoint or a moment: tx:42 (that durable txid, even one an earlier rollback left behind) or',
    'at:2026-12-07T10:00:00Z (the last durable state at or before it), inside the history window.',
    '--check only asks: whether this rollback, by whoever asks (--actor), would go ahead now.',
  ].join('\n'),
  examples: [
    'offshoot rollback app --to seeded',
    'offshoot rollback app --to promote   # undo the last promote onto main',
  ],
  flags: {
    to: { type: 'string', value: 'CP', description: 'the checkpoint to roll back to (required)' },
    materialize: { type: 'boolean', description: "copy the checkpoint's state instead of sharing it" },
    check: {
      type: 'boolean',
      description: 'only check: run every refusal it would meet now, change nothing',
    },
    'ro-cache-budget': RO_CACHE_BUDGET_FLAG,
  },
  fillsRoCache: true,

  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const to = inv.flags.string('to');
    if (to === undefined)
      throw fail('USAGE', 'rollback needs --to CP', { hint: `write 'offshoot rollback ${inv.arg(0)} --to CP'` });
    validatePointName(to);
    const ctx = await inv.context();
    const { checkRollback, rollback } = await import('../../ops/rollback.js');
    if (inv.flags.boolean('check')) {
      await checkRollback(ctx, t, to, { actor: inv.actor });
      return checkOutcome('rollback', t);
    }
    const r = await rollback(ctx, t, to, { materialize: inv.flags.boolean('materialize'), actor: inv.actor });
    // The undo command must carry --force exactly when the branch needs it, so it is read after the rollback.
    const branchProtected = (await ctx.store.tryGetRef(t.db, t.branch))?.ref.protected ?? false;
    return rollbackOutcome(r, branchProtected);
  },
};
