import { fail } from '../../core/errors.js';
import type { Command } from '../command.js';
import { initOutcome } from '../output.js';

/** `offshoot init [--layout N]`: writes the store manifest, create-only. */
export const initCommand: Command = {
  name: 'init',
  summary: 'create a store (./.offshoot unless -store says otherwise)',
  usage: '[--layout N] [--history-window DURATION]',
  help: [
    'Writes the store manifest create-only; refuses a store that already exists (init is not idempotent).',
    'The store starts at layout 3 unless --layout says otherwise: writers bound chains with merged segments, so every',
    'flush writes only changed pages; the earlier implementation refuses such a store. --layout 2 (what the earlier',
    'implementation writes) keeps it readable by both, chains bounded by snapshots of the head; --layout 1 keeps even',
    "binaries older than base pointers reading it until the first shared fork raises it to 2. 'offshoot upgrade' raises",
    "an existing store's layout later; nothing else ever changes it. --history-window sets how long every durable",
    "txid stays addressable as a moment (@tx:, @at:; a day by default); 'offshoot config' changes it later.",
  ].join('\n'),
  examples: [
    'offshoot init',
    'offshoot init --layout 2',
    'offshoot init --history-window 168h',
    'offshoot -store s3://my-bucket/offshoot init',
  ],
  flags: {
    layout: {
      type: 'string',
      value: 'N',
      description: "the store's layout: 1, 2 (read by the earlier implementation) or 3 (default: merged segments)",
    },
    'history-window': {
      type: 'string',
      value: 'DURATION',
      description: 'how long every durable txid stays addressable as a moment (default 24h)',
    },
  },
  args: { min: 0, max: 0 },
  async run(inv) {
    const raw = inv.flags.string('layout');
    if (raw !== undefined && !/^[1-3]$/.test(raw))
      throw fail('USAGE', `--layout ${JSON.stringify(raw)} is not a layout this build writes`, {
        hint: 'pass --layout 1, 2 or 3, or leave it out for 3',
      });
    const window = inv.flags.string('history-window');
    const spec = inv.storeSpec();
    const [{ Store }, { checkHistoryWindow, writeStoreConfig }] = await Promise.all([
      import('../../store/store.js'),
      import('../../store/store-config.js'),
    ]);
    // Checked before the store is made, so a bad window leaves nothing behind.
    const history = window === undefined ? undefined : checkHistoryWindow(window);
    const store = await Store.init(spec, raw === undefined ? {} : { layout: Number(raw) });
    try {
      if (history !== undefined) await writeStoreConfig(store.backend, { history_window: history }, undefined);
    } finally {
      await store.close();
    }
    return initOutcome(spec.text, store.layoutVersion);
  },
};
