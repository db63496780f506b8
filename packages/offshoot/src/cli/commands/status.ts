import { fail } from '../../core/errors.js';
import type { Command } from '../command.js';
import { statusTailOutcome } from '../output.js';
import { cliRoCacheBudget, DEFAULT_CLI_RO_CACHE_BUDGET } from '../ro-cache-budget.js';
import { statusPrinter } from '../status-printer.js';

/** `offshoot status [db] [--db D]… [--state S]… [--limit N] [--json [--stream]]`: branches as they are read, then the ro-cache usage. */
export const statusCommand: Command = {
  name: 'status',
  summary: 'list branches with state, storage class, head, checkpoints and TTL',
  usage: '[db] [--db DB]... [--state STATE]... [--limit N] [--stream] [-ro-cache-budget BYTES]',
  help: [
    'One line per branch (of <db>, or of the whole store), printed as the refs are read:',
    '  db@b state=S storage=shared|materialized txid=N checkpoints=[a,b] [protected] [checked-out] [ttl=X remaining=D|expired]',
    "then the checkouts-ro usage; on stderr, the store's layout: what it allows, and what `offshoot upgrade` would buy.",
    'States: active, dirty, detached, idle (error and pending only a daemon reports).',
    'Filters are exact and combine: --db (repeatable, with or instead of <db>) lists only those databases and reads no',
    "other database's refs; --state (repeatable) keeps branches in one of those states; --limit N prints at most N",
    'branches, then `more: M more branches match` (under --json: "truncated": true, "more": M; both are present',
    'whenever --limit is given). A ref that cannot be read is reported whatever --state says.',
    'Under --json the document is written as it is read; --stream prints JSON Lines instead: one branch per line, as in',
    'the document\'s "branches", then one line with the rest of the document ("unreadable", "ro_cache", "layout", and',
    'under --limit "truncated" and "more").',
    'The usage is shown against the budget the CLI trims checkouts-ro/ to ($OFFSHOOT_RO_CACHE_BUDGET, else',
    `${DEFAULT_CLI_RO_CACHE_BUDGET}; 0: unlimited). -ro-cache-budget only changes what is shown: pass a daemon's own -ro-cache-budget`,
    'to see usage against it (bytes, or K/M/G/T, 1024-based).',
    'A ref that cannot be read is named on stderr with its fix, every other branch is still listed, and the exit code',
    'is 7. A database with no branches is not found (exit 3), before anything is printed.',
  ].join('\n'),
  examples: [
    'offshoot status',
    'offshoot status app --json',
    'offshoot status --db app --db billing --state dirty --state detached',
    'offshoot status --state active --limit 20',
    'offshoot status --json --stream --db app',
  ],
  flags: {
    db: { type: 'string', multiple: true, value: 'DB', description: 'only this database' },
    state: {
      type: 'string',
      multiple: true,
      value: 'STATE',
      description: 'only branches in this state: active, dirty, detached, idle, error or pending',
    },
    limit: { type: 'string', value: 'N', description: 'print at most N branches and say how many more match' },
    stream: {
      type: 'boolean',
      description: 'with --json: JSON Lines, one branch per line, then the rest of the document',
    },
    'ro-cache-budget': {
      type: 'string',
      value: 'BYTES',
      description: `show ro-cache usage against this budget (default $OFFSHOOT_RO_CACHE_BUDGET, else ${DEFAULT_CLI_RO_CACHE_BUDGET}; 0: unlimited)`,
    },
  },
  args: { min: 0, max: 1 },
  async run(inv) {
    const stream = inv.flags.boolean('stream');
    if (stream && !inv.json)
      throw fail('USAGE', '--stream needs --json', {
        hint: 'write --json --stream for JSON Lines; the text output is already printed as it is read',
      });
    const rawLimit = inv.flags.string('limit');
    if (rawLimit !== undefined && !/^[0-9]+$/.test(rawLimit))
      throw fail('USAGE', `--limit ${JSON.stringify(rawLimit)} is not a whole number of branches`, {
        hint: 'pass --limit N with N of at least 1',
      });
    const budget = cliRoCacheBudget(inv.flags, process.env);
    const ctx = await inv.context();
    const { scanStatus } = await import('../../ops/status.js');
    const printer = statusPrinter(inv.json ? (stream ? 'jsonl' : 'json') : 'text', inv.print);
    const tail = await scanStatus(
      ctx,
      {
        ...(inv.args[0] === undefined ? {} : { db: inv.args[0] }),
        dbs: inv.flags.list('db'),
        states: inv.flags.list('state'),
        ...(rawLimit === undefined ? {} : { limit: Number(rawLimit) }),
        ...(budget ? { roCacheBudget: budget } : {}),
      },
      (b) => printer.branch(b),
    );
    await printer.end(tail);
    return statusTailOutcome(tail);
  },
};
