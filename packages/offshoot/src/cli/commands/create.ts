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
    'The source is checked first: an empty, truncated or malformed file, or one failing quick_check, is refused with',
    'exit 7 (corrupt); a directory or a file with a hot journal (a writer crashed mid-transaction) with exit 2. A WAL',
    'file without its -shm is read from a private copy, so nothing is ever created beside the source.',
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
