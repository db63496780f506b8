import { validateName } from '../../core/names.js';
import type { Command } from '../command.js';
import { statusOutcome } from '../output.js';
import { cliRoCacheBudget, DEFAULT_CLI_RO_CACHE_BUDGET } from '../ro-cache-budget.js';

/** `offshoot status [db] [-ro-cache-budget B]`: every branch's state, then the read-only cache usage. */
export const statusCommand: Command = {
  name: 'status',
  summary: 'list branches with state, storage class, head, checkpoints and TTL',
  usage: '[db] [-ro-cache-budget BYTES]',
  help: [
    'One line per branch (of <db>, or of the whole store):',
    '  db@b state=S storage=shared|materialized txid=N checkpoints=[a,b] [protected] [checked-out] [ttl=X remaining=D|expired]',
    'then the checkouts-ro usage. States: active, dirty, detached, idle (error and pending only a daemon reports).',
    'The usage is shown against the budget the CLI trims checkouts-ro/ to ($OFFSHOOT_RO_CACHE_BUDGET, else',
    `${DEFAULT_CLI_RO_CACHE_BUDGET}; 0: unlimited). -ro-cache-budget only changes what is shown: pass a daemon's own -ro-cache-budget`,
    'to see usage against it (bytes, or K/M/G/T, 1024-based).',
    'A ref that cannot be read is named on stderr with its fix, every other branch is still listed, and the exit code',
    'is 7. A <db> with no branches is not found (exit 3).',
  ].join('\n'),
  examples: ['offshoot status', 'offshoot status app --json'],
  flags: {
    'ro-cache-budget': {
      type: 'string',
      value: 'BYTES',
      description: `show ro-cache usage against this budget (default $OFFSHOOT_RO_CACHE_BUDGET, else ${DEFAULT_CLI_RO_CACHE_BUDGET}; 0: unlimited)`,
    },
  },
  args: { min: 0, max: 1 },
  async run(inv) {
    const db = inv.args[0] === undefined ? undefined : validateName('database', inv.args[0]);
    const budget = cliRoCacheBudget(inv.flags, process.env);
    const ctx = await inv.context();
    const { status } = await import('../../ops/status.js');
    return statusOutcome(
      await status(ctx, { ...(db === undefined ? {} : { db }), ...(budget ? { roCacheBudget: budget } : {}) }),
    );
  },
};
