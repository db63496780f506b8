import { parseMetaPairs } from '../../core/meta.js';
import { validateName } from '../../core/names.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { checkpointOutcome } from '../output.js';

/** `offshoot checkpoint <db>[@b] <name> [--meta k=v]...`: names the checkout's current state durably. */
export const checkpointCommand: Command = {
  name: 'checkpoint',
  summary: "record the checkout's current state as a named checkpoint",
  usage: '<db>[@branch] <name> [--meta K=V]...',
  help: [
    "Quiesces the branch's checkout, uploads what changed since it was materialized (a segment, or a snapshot when",
    'most pages changed) at head+1, and records <name> by compare-and-swap. Needs a checkout of the branch.',
    'Once the checkpoint is reported, a chain grown past its bound is merged (level compaction, crash-safe).',
    'Meta is capped at 32 keys, 64-byte keys and 512-byte values; keys starting with "offshoot." are offshoot\'s own.',
  ].join('\n'),
  examples: ['offshoot checkpoint app seeded', 'offshoot checkpoint app@attempt-1 tests-pass --meta run=42'],
  flags: { meta: { type: 'string', multiple: true, value: 'K=V', description: 'tag the checkpoint' } },
  args: { min: 2, max: 2 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const name = validateName('checkpoint', inv.arg(1));
    const meta = parseMetaPairs(inv.flags.list('meta'));
    const ctx = await inv.context();
    const [{ checkpoint }, { compactBranch }] = await Promise.all([
      import('../../ops/checkpoint.js'),
      import('../../ops/compact.js'),
    ]);
    const r = await checkpoint(ctx, t, name, meta, { actor: inv.actor });
    // The checkpoint is durable and reported first; merging the chain it grew is not part of its cost.
    const afterward = async (): Promise<void> => {
      if (r.kind !== 'none') await compactBranch(ctx, t.db, t.branch);
    };
    return { ...checkpointOutcome(name, r), afterward };
  },
};
