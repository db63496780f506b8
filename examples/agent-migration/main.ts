// An agent-style migration: fork before a risky schema change, checkpoint, migrate with the stock sqlite3 shell,
// run the checks, roll back on failure and promote on success. Run: node --import tsx examples/agent-migration/main.ts
import { execFileSync } from 'node:child_process';
import { type Client, connect, isOffshootError } from '@offshoot/client';
import { exampleDaemon } from '../daemon-for-example.js';

/** The stock sqlite3 shell: the agent's tools write with whatever client they like. */
function sqlite(path: string, sql: string): string {
  const args = ['-bail', '-cmd', '.timeout 5000', path, sql];
  return execFileSync('sqlite3', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

const MIGRATIONS: Record<string, string> = {
  // Drops the column the invoice report reads: the checks must catch it.
  'drop-total': 'ALTER TABLE orders DROP COLUMN total;',
  // Adds a currency with a default and backfills it: the checks pass.
  'add-currency':
    "ALTER TABLE orders ADD COLUMN currency TEXT NOT NULL DEFAULT 'EUR'; UPDATE orders SET currency = 'USD' WHERE id = 2;",
};

/** What must hold after any migration; returns the failures. */
function checks(path: string, orders: number): string[] {
  const failures: string[] = [];
  if (sqlite(path, 'PRAGMA integrity_check;') !== 'ok') failures.push('integrity_check');
  if (Number(sqlite(path, 'SELECT count(*) FROM orders;')) !== orders) failures.push('orders row count');
  try {
    sqlite(path, 'SELECT id, total FROM orders;');
  } catch {
    failures.push('the invoice report query (SELECT id, total FROM orders)');
  }
  return failures;
}

async function migrate(client: Client, db: string, name: string, sql: string): Promise<boolean> {
  const branch = `migrate-${name}`;
  await client.fork(db, 'main', branch, { ttl: '1h', meta: { migration: name } });
  const session = await client.open(db, branch);
  const orders = Number(sqlite(session.path, 'SELECT count(*) FROM orders;'));
  await session.flush('before-migration');
  let ok = false;
  try {
    sqlite(session.path, sql);
    const failures = checks(session.path, orders);
    ok = failures.length === 0;
    console.log(`${name}: ${ok ? 'checks pass' : `checks fail: ${failures.join(', ')}`}`);
  } catch (err) {
    console.log(`${name}: the migration itself failed: ${String(err)}`);
  }
  if (!ok) {
    // Roll the fork back to the checkpoint and prove the schema is what it was, then drop the fork.
    await session.close();
    const path = await client.rollback(db, branch, 'before-migration');
    if (checks(path, orders).length > 0) throw new Error(`${name}: rollback did not restore the schema`);
    console.log(`${name}: rolled back to before-migration; main untouched`);
    await client.destroy(db, branch);
    await client.destroy(db, `${branch}-pre-rollback`).catch((err: unknown) => {
      if (!isOffshootError(err, 'NOT_FOUND')) throw err;
    });
    return false;
  }
  await session.flush('migrated', { meta: { migration: name } });
  await session.close();
  await client.promote(db, branch, 'main', { force: true });
  await client.destroy(db, branch);
  console.log(`${name}: promoted onto main`);
  return true;
}

const daemon = await exampleDaemon();
const client = await connect(daemon.sock);
try {
  const db = 'shop';
  if (!(await client.dbs()).includes(db)) {
    await client.create(db);
    const seed = await client.open(db);
    sqlite(
      seed.path,
      "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT, total REAL); INSERT INTO orders(customer, total) VALUES ('ada', 12.5), ('grace', 40), ('linus', 7.25);",
    );
    await seed.flush('seeded');
    await seed.close();
  }
  const outcomes = [];
  for (const [name, sql] of Object.entries(MIGRATIONS)) outcomes.push(await migrate(client, db, name, sql));
  const main = await client.checkout(db, 'main');
  const columns = sqlite(main, "SELECT group_concat(name) FROM pragma_table_info('orders');");
  console.log(`main: orders(${columns})`);
  if (outcomes.join() !== 'false,true' || columns !== 'id,customer,total,currency') {
    throw new Error('the risky migration must be rolled back and the safe one promoted');
  }
} finally {
  await client.close();
  await daemon.stop();
}
