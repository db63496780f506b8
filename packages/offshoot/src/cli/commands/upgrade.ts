import { fail } from '../../core/errors.js';
import type { Command } from '../command.js';
import { upgradeOutcome } from '../output.js';

/** `offshoot upgrade [--to N]`: raises the store's layout, one way; the only command that changes it past 2. */
export const upgradeCommand: Command = {
  name: 'upgrade',
  summary: "raise the store's layout (to 3: merged segments), one way",
  usage: '[--to N]',
  help: [
    "Raises the store's layout to N (default 3, the newest) by compare-and-swap on offshoot.json. Nothing else changes a",
    "store's layout past 2: a store keeps its layout, its chains bounded by snapshots as the earlier implementation",
    'bounded them, until its owner runs this. Layout 3 lets writers merge segments, so a long history costs each write',
    'only its changed pages, and the earlier implementation then refuses the whole store ("layout version 3 is newer',
    'than this binary supports"): upgrade only once every binary that opens the store is this one.',
    'Idempotent: a store already at N is left alone (exit 0, "upgraded": false). One way: a store past N is refused',
    '(exit 2) and never lowered. A running daemon or `offshoot mcp` reads the new layout before it next compacts a chain.',
    '`offshoot status` shows the layout and what upgrading buys.',
  ].join('\n'),
  examples: ['offshoot upgrade', 'offshoot upgrade --json', 'offshoot -store s3://my-bucket/offshoot upgrade --to 3'],
  flags: {
    to: { type: 'string', value: 'N', description: 'the layout to raise the store to (default 3, the newest)' },
  },
  args: { min: 0, max: 0 },
  async run(inv) {
    const raw = inv.flags.string('to');
    if (raw !== undefined && !/^[0-9]+$/.test(raw))
      throw fail('USAGE', `--to ${JSON.stringify(raw)} is not a layout number`, {
        hint: 'pass --to 3, or leave it out for 3',
      });
    const ctx = await inv.context();
    const { upgrade } = await import('../../ops/upgrade.js');
    return upgradeOutcome(await upgrade(ctx, raw === undefined ? {} : { to: Number(raw) }));
  },
};
