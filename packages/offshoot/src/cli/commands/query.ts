import { fail } from '../../core/errors.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { queryOutcome } from '../output.js';
import { RO_CACHE_BUDGET_FLAG } from '../ro-cache-budget.js';

/** `offshoot query <db>[@b[@cp]] <sql> [--limit N]`: one read-only statement against a branch or a checkpoint. */
export const queryCommand: Command = {
  name: 'query',
  summary: 'run one read-only SQL statement against a branch or a checkpoint',
  usage: '<db>[@branch[@checkpoint]] <sql> [--limit N]',
  help: [
    "Reads the branch's checkout when it has one (so writes not yet checkpointed show), else its durable head; a",
    'checkpoint is read from its immutable read-only copy. One SELECT, WITH, EXPLAIN or reporting PRAGMA; writes,',
    'ATTACH, PRAGMA assignments and VACUUM are refused, and the statement runs in a child process on a read-only',
    'connection that is stopped after 5 s. Prints the column names, then one line per row (values as JSON, joined',
    'by " | "); --json prints {source, columns, rows, truncated}. BLOBs come back summarised. A moment reads as a',
    'checkpoint does: db@branch@tx:42, db@branch@at:2026-12-07T10:00:00Z.',
  ].join('\n'),
  examples: [
    "offshoot query app 'SELECT count(*) FROM notes'",
    "offshoot query app@attempt-1@tests-pass 'SELECT * FROM notes' --limit 20",
    "offshoot query app 'SELECT name, sql FROM sqlite_schema' --json",
  ],
  flags: {
    limit: { type: 'string', value: 'N', description: 'the most rows to print (default 100, at most 1000)' },
    'ro-cache-budget': RO_CACHE_BUDGET_FLAG,
  },
  fillsRoCache: true,
  args: { min: 2, max: 2 },
  async run(inv) {
    const t = parseTarget(inv.arg(0), { allowCheckpoint: true });
    const rawLimit = inv.flags.string('limit');
    if (rawLimit !== undefined && !/^[0-9]+$/.test(rawLimit))
      throw fail('USAGE', `--limit ${JSON.stringify(rawLimit)} is not a whole number of rows`, {
        hint: 'pass --limit N with N between 1 and 1000',
      });
    const ctx = await inv.context();
    const { query } = await import('../../ops/query.js');
    const r = await query(ctx, { db: t.db, branch: t.branch }, inv.arg(1), {
      ...(t.checkpoint !== undefined ? { at: t.checkpoint } : {}),
      ...(rawLimit !== undefined ? { limit: Number(rawLimit) } : {}),
    });
    return queryOutcome(r);
  },
};
