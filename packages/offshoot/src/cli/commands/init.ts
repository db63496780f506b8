import { fail } from '../../core/errors.js';
import type { Command } from '../command.js';
import { initOutcome } from '../output.js';

/** `offshoot init [--layout N]`: writes the store manifest, create-only. */
export const initCommand: Command = {
  name: 'init',
  summary: 'create a store (./.offshoot unless -store says otherwise)',
  usage: '[--layout N]',
  help: [
    'Writes the store manifest create-only; refuses a store that already exists (init is not idempotent).',
    'The store starts at layout 3 unless --layout says otherwise: writers bound chains with merged segments, so every',
    'flush writes only changed pages; the earlier implementation refuses such a store. --layout 2 (what the earlier',
    'implementation writes) keeps it readable by both, chains bounded by snapshots of the head; --layout 1 keeps even',
    "binaries older than base pointers reading it until the first shared fork raises it to 2. 'offshoot upgrade' raises",
    "an existing store's layout later; nothing else ever changes it.",
  ].join('\n'),
  examples: ['offshoot init', 'offshoot init --layout 2', 'offshoot -store s3://my-bucket/offshoot init'],
  flags: {
    layout: {
      type: 'string',
      value: 'N',
      description: "the store's layout: 1, 2 (read by the earlier implementation) or 3 (default: merged segments)",
    },
  },
  args: { min: 0, max: 0 },
  async run(inv) {
    const raw = inv.flags.string('layout');
    if (raw !== undefined && !/^[1-3]$/.test(raw))
      throw fail('USAGE', `--layout ${JSON.stringify(raw)} is not a layout this build writes`, {
        hint: 'pass --layout 1, 2 or 3, or leave it out for 3',
      });
    const spec = inv.storeSpec();
    const { Store } = await import('../../store/store.js');
    const store = await Store.init(spec, raw === undefined ? {} : { layout: Number(raw) });
    await store.close();
    return initOutcome(spec.text, store.layoutVersion);
  },
};
