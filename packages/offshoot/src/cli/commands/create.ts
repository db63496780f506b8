import { validateName } from '../../core/names.js';
import type { Command } from '../command.js';
import { createOutcome } from '../output.js';

/** `offshoot create <db> [--from file]`: a new database, empty or imported. */
export const createCommand: Command = {
  name: 'create',
  summary: 'create a database (branch main, protected), empty or imported from a file',
  usage: '<db> [--from FILE]',
  help: [
    'Creates <db> with a protected main branch at txid 1 and checkpoint "init".',
    'With --from, imports an existing SQLite file (its -wal included) at a transaction boundary; the file is never modified.',
  ].join('\n'),
  examples: ['offshoot create app', 'offshoot create legacy --from ./existing.db'],
  flags: {
    from: { type: 'string', value: 'FILE', description: 'import this SQLite database instead of starting empty' },
  },
  args: { min: 1, max: 1 },
  async run(inv) {
    const db = validateName('database', inv.arg(0));
    const from = inv.flags.string('from');
    const ctx = await inv.context();
    const { create } = await import('../../ops/create.js');
    return createOutcome(await create(ctx, db, from === undefined ? {} : { from }));
  },
};
