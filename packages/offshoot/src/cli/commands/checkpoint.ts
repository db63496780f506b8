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
    'Meta is capped at 32 keys, 64-byte keys and 512-byte values.',
  ].join('\n'),
  examples: ['offshoot checkpoint app seeded', 'offshoot checkpoint app@attempt-1 tests-pass --meta run=42'],
  flags: { meta: { type: 'string', multiple: true, value: 'K=V', description: 'tag the checkpoint' } },
  args: { min: 2, max: 2 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const name = validateName('checkpoint', inv.arg(1));
    const meta = parseMetaPairs(inv.flags.list('meta'));
    const ctx = await inv.context();
    const { checkpoint } = await import('../../ops/checkpoint.js');
    return checkpointOutcome(name, await checkpoint(ctx, t, name, meta));
  },
};
