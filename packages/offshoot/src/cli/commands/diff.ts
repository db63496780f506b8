import { fail } from '../../core/errors.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { RO_CACHE_BUDGET_FLAG } from '../ro-cache-budget.js';
import { diffOutcome } from '../output.js';

/** `offshoot diff <L> <R> [--summary|--sql]`: a row-level diff of two durable states. */
export const diffCommand: Command = {
  name: 'diff',
  summary: 'compare two durable states (heads or checkpoints, any two databases)',
  usage: '<db>[@branch[@checkpoint]] <db>[@branch[@checkpoint]] [--summary|--sql] [--table T]',
  help: [
    'Reads both sides read-only from the store (durable state only, no lease; safe next to live sessions).',
    'The first line is "left:  <L> right: <R>" with the targets as typed, then schema changes and per-table rows',
    '(+ added, - removed, ~ changed). --summary prints per-table row counts; --sql prints SQL that turns the',
    'left side into the right; --json prints the whole diff as one document. --table limits it to one table (with',
    'the schema changes of that table, its indexes and triggers). A diff whose rows pass 256 MiB fails TOO_LARGE',
    '(exit 2): ask for --summary, one --table, or two checkpoints closer together.',
  ].join('\n'),
  examples: [
    'offshoot diff app app@attempt-1',
    'offshoot diff app@main@seeded app --summary',
    'offshoot diff app app@attempt-1 --sql > change.sql',
    'offshoot diff app app@attempt-1 --table orders --json',
  ],
  flags: {
    summary: { type: 'boolean', description: 'per-table counts and statuses only' },
    sql: { type: 'boolean', description: 'SQL that turns the left side into the right' },
    table: { type: 'string', value: 'T', description: 'only this table (its rows, its schema changes)' },
    'ro-cache-budget': RO_CACHE_BUDGET_FLAG,
  },
  fillsRoCache: true,

  args: { min: 2, max: 2 },
  async run(inv) {
    const left = parseTarget(inv.arg(0), { allowCheckpoint: true });
    const right = parseTarget(inv.arg(1), { allowCheckpoint: true });
    const summary = inv.flags.boolean('summary');
    const sql = inv.flags.boolean('sql');
    if (summary && sql)
      throw fail('USAGE', '--summary and --sql are mutually exclusive', { hint: 'pick one output form' });
    const ctx = await inv.context();
    const { diff } = await import('../../ops/diff.js');
    const table = inv.flags.string('table');
    const result = await diff(ctx, left, right, {
      summaryOnly: summary,
      ...(table !== undefined && table !== '' ? { tables: [table] } : {}),
    });
    return diffOutcome(result, inv.arg(0), inv.arg(1), summary ? 'summary' : sql ? 'sql' : 'text');
  },
};
