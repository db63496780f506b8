import type { Command } from '../command.js';
import { initOutcome } from '../output.js';

/** `offshoot init`: writes the store manifest, create-only. */
export const initCommand: Command = {
  name: 'init',
  summary: 'create a store (./.offshoot unless -store says otherwise)',
  usage: '',
  help: 'Writes the store manifest create-only; refuses a store that already exists (init is not idempotent).',
  examples: ['offshoot init', 'offshoot -store s3://my-bucket/offshoot init'],
  flags: {},
  args: { min: 0, max: 0 },
  async run(inv) {
    const spec = inv.storeSpec();
    const { Store } = await import('../../store/store.js');
    const store = await Store.init(spec);
    await store.close();
    return initOutcome(spec.text);
  },
};
