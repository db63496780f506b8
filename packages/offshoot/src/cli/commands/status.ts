import { validateName } from '../../core/names.js';
import { parseByteSize } from '../byte-size.js';
import type { Command } from '../command.js';
import { statusOutcome } from '../output.js';

/** `offshoot status [db] [-ro-cache-budget B]`: every branch's state, then the read-only cache usage. */
export const statusCommand: Command = {
  name: 'status',
  summary: 'list branches with state, storage class, head, checkpoints and TTL',
  usage: '[db] [-ro-cache-budget BYTES]',
  help: [
    'One line per branch (of <db>, or of the whole store):',
    '  db@b state=S storage=shared|materialized txid=N checkpoints=[a,b] [protected] [checked-out] [ttl=X remaining=D|expired]',
    'then the checkouts-ro usage. States: active, dirty, detached, idle (error and pending only a daemon reports).',
    "-ro-cache-budget is display-only: pass the daemon's own value to see usage against it (bytes, or K/M/G/T, 1024-based).",
    'A ref that cannot be read is named on stderr with its fix, every other branch is still listed, and the exit code',
    'is 7. A <db> with no branches is not found (exit 3).',
  ].join('\n'),
  examples: ['offshoot status', 'offshoot status app --json'],
  flags: {
    'ro-cache-budget': { type: 'string', value: 'BYTES', description: 'show ro-cache usage against this budget' },
  },
  args: { min: 0, max: 1 },
  async run(inv) {
    const db = inv.args[0] === undefined ? undefined : validateName('database', inv.args[0]);
    const budgetText = inv.flags.string('ro-cache-budget');
    const budget = budgetText === undefined ? undefined : parseByteSize(budgetText, '-ro-cache-budget');
    const ctx = await inv.context();
    const { status } = await import('../../ops/status.js');
    return statusOutcome(
      await status(ctx, { ...(db === undefined ? {} : { db }), ...(budget ? { roCacheBudget: budget } : {}) }),
    );
  },
};
