// The one seed every runner's fixture project forks from, and the per-test report its driver checks.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Two rows; each test adds one of its own to its fork and must see exactly three. */
export const SEED_SQL = "CREATE TABLE items(label TEXT);\nINSERT INTO items VALUES ('a'), ('b')";

/** The seed's name: its database is eval-runner. */
export const SEED_NAME = 'runner';

/** Runs SQL on a checkout with the stock sqlite3 shell, as any foreign writer would. */
export function sql(path, text) {
  return execFileSync('sqlite3', ['-bail', '-cmd', '.timeout 5000', path, text], { encoding: 'utf8' }).trim();
}

/** Writes into the fork, checks it sees the seed plus only its own row, and records which worker ran it. */
export function exercise(fork, title, worker) {
  sql(fork.path, `INSERT INTO items VALUES (${JSON.stringify(title).replaceAll('"', "'")});`);
  const labels = sql(fork.path, 'SELECT group_concat(label) FROM items;');
  const record = { title, worker, pid: process.pid, branch: fork.branch, db: fork.db, labels };
  writeFileSync(join(process.env.OFFSHOOT_RUNNER_REPORT, `${randomUUID()}.json`), JSON.stringify(record));
  return labels;
}
