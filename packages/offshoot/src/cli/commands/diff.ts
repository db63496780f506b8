import { fail } from '../../core/errors.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { RO_CACHE_BUDGET_FLAG } from '../ro-cache-budget.js';
import { diffOutcome } from '../output.js';

/** `offshoot diff <L> <R> [--summary|--sql] [--table T] [--limit N]`: a row-level diff of two durable states. */
export const diffCommand: Command = {
  name: 'diff',
  summary: 'compare two durable states (heads or checkpoints, any two databases)',
  usage: '<db>[@branch[@checkpoint]] <db>[@branch[@checkpoint]] [--summary|--sql] [--table T] [--limit N]',
  help: [
    'Reads both sides read-only from the store (durable state only, no lease; safe next to live sessions).',
    'The first line is "left:  <L> right: <R>" with the targets as typed, then schema changes and per-table rows',
    '(+ added, - removed, ~ changed). --summary prints per-table row counts; --sql prints SQL that turns the',
    'left side into the right; --json prints the whole diff as one document. --table limits it to one table (with',
    'the schema changes of that table, its indexes and triggers). --limit N lists at most N row changes of each',
    'kind per table; the counts stay whole ("… N more not listed"). A diff whose listed rows pass 256 MiB fails',
    'TOO_LARGE (exit 2), naming what narrows it: --limit, one --table, --summary, or closer checkpoints. Either side',
    'may name a moment where a checkpoint goes: db@branch@tx:42, db@branch@at:2026-12-07T10:00:00Z.',
  ].join('\n'),
  examples: [
    'offshoot diff app app@attempt-1',
    'offshoot diff app@main@seeded app --summary',
    'offshoot diff app app@attempt-1 --sql > change.sql',
    'offshoot diff app app@attempt-1 --table orders --json',
    'offshoot diff app app@attempt-1 --table orders --limit 10',
  ],
  flags: {
    summary: { type: 'boolean', description: 'per-table counts and statuses only' },
    sql: { type: 'boolean', description: 'SQL that turns the left side into the right' },
    table: { type: 'string', value: 'T', description: 'only this table (its rows, its schema changes)' },
    limit: {
      type: 'string',
      value: 'N',
      description: 'list at most N row changes of each kind per table (the counts stay whole)',
    },
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
    const rawLimit = inv.flags.string('limit');
    if (rawLimit !== undefined && !/^[0-9]+$/.test(rawLimit))
      throw fail('USAGE', `--limit ${JSON.stringify(rawLimit)} is not a whole number of rows`, {
        hint: 'pass --limit N, the most row changes of each kind listed per table',
      });
    if (rawLimit !== undefined && sql)
      throw fail('USAGE', '--sql needs every row change, so it takes no --limit', {
        hint: 'drop --limit, or narrow the SQL with --table',
      });
    const ctx = await inv.context();
    const [{ diff }, { firstRows }] = await Promise.all([
      import('../../ops/diff.js'),
      import('../../sqlite/diff/row-window.js'),
    ]);
    const table = inv.flags.string('table');
    const result = await diff(ctx, left, right, {
      summaryOnly: summary,
      forSql: sql,
      ...(table !== undefined && table !== '' ? { tables: [table] } : {}),
      ...(rawLimit !== undefined ? { rows: firstRows(Number(rawLimit)) } : {}),
    });
    return diffOutcome(result, inv.arg(0), inv.arg(1), summary ? 'summary' : sql ? 'sql' : 'text');
  },
};
