// migrations.eval.ts: each data item is a change an agent proposes for the orders table; withFork runs it in a
// private fork of the one seeded database, so items run side by side without seeing each other's writes, and the
// scorer checks the result.
// Run: npx evalite run
import { execFileSync } from 'node:child_process';
import { withFork } from '@offshoot/evalite';
import { createScorer, evalite } from 'evalite';

interface Outcome {
  /** Orders in the fork before the change: the seed, whatever the other items did. */
  before: number;
  after: number;
  columns: string;
}

function sqlite(path: string, sql: string): string {
  return execFileSync('sqlite3', ['-bail', path, sql], { encoding: 'utf8' }).trim();
}

const exact = createScorer<string, Outcome, Outcome>({
  name: 'state matches',
  scorer: ({ output, expected }) => (JSON.stringify(output) === JSON.stringify(expected) ? 1 : 0),
});

evalite<string, Outcome, Outcome>('orders migrations', {
  data: [
    {
      input: "ALTER TABLE orders ADD COLUMN currency TEXT NOT NULL DEFAULT 'EUR'",
      expected: { before: 3, after: 3, columns: 'id,customer,total,currency' },
    },
    { input: 'DELETE FROM orders WHERE total < 20', expected: { before: 3, after: 2, columns: 'id,customer,total' } },
    {
      input: "INSERT INTO orders(customer, total) VALUES ('barbara', 7)",
      expected: { before: 3, after: 4, columns: 'id,customer,total' },
    },
  ],
  task: withFork(async (change, fork) => {
    const before = Number(sqlite(fork.path, 'SELECT count(*) FROM orders'));
    sqlite(fork.path, change);
    await fork.flush('changed', { meta: { change } });
    return {
      before,
      after: Number(sqlite(fork.path, 'SELECT count(*) FROM orders')),
      columns: sqlite(fork.path, "SELECT group_concat(name, ',') FROM pragma_table_info('orders')"),
    };
  }),
  scorers: [exact],
});
