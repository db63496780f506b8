import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { connect, isOffshootError } from '../src/index.js';
import { dump, forkPerTest, seedOnce, startDaemon, type TestDaemon } from '../src/testkit.js';

const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = BIN;

const SEED = `-- a comment first
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO users(name) VALUES ('ada'), ('grace');
`;

function sql(path: string, text: string): string {
  return execFileSync('sqlite3', ['-bail', path, text], { encoding: 'utf8' });
}

describe('testkit against a real daemon', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  const tmp = mkdtempSync(join(tmpdir(), 'offshoot-'));

  before(async () => {
    daemon = await startDaemon();
  });
  after(async () => {
    await daemon.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('startDaemon gives a socket and store in a temp dir, and captures stderr', () => {
    assert.ok(existsSync(daemon.sock));
    assert.ok(existsSync(daemon.store));
    assert.equal(daemon.proc.exitCode, null);
    assert.equal(typeof daemon.stderrTail(5), 'string');
  });

  test('seedOnce seeds eval-<name> at checkpoint seed, once per daemon and name', async () => {
    const first = seedOnce(daemon, { seed: SEED });
    const second = seedOnce(daemon, { seed: SEED });
    assert.equal(first, second, 'the promise is memoized');
    assert.deepEqual(await first, { db: 'eval-default', checkpoint: 'seed', name: 'default' });
    await assert.rejects(seedOnce(daemon, { seed: `${SEED}INSERT INTO users(name) VALUES ('x');` }), (e) =>
      isOffshootError(e, 'INVALID_ARGUMENT'),
    );
  });

  test('a .sql file in .dump form (its own transaction) and a callback both seed', async () => {
    const src = join(tmp, 'src.db');
    sql(
      src,
      "CREATE TABLE items(id INTEGER PRIMARY KEY, label TEXT); INSERT INTO items(label) VALUES ('one'), ('two');",
    );
    const file = join(tmp, 'items.sql');
    writeFileSync(file, sql(src, '.dump'));
    assert.match(sql(src, '.dump'), /^PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;/);
    const fromFile = await seedOnce(daemon, { name: 'items', seed: file });
    assert.equal(fromFile.db, 'eval-items');

    const cb = async (dbPath: string): Promise<void> => {
      sql(dbPath, 'CREATE TABLE k(v); INSERT INTO k VALUES (42);');
    };
    const fromCallback = await seedOnce(daemon, { name: 'cb', seed: cb });
    assert.equal(await seedOnce(daemon, { name: 'cb', seed: cb }), fromCallback);
    await assert.rejects(seedOnce(daemon, { name: 'cb', seed: async () => undefined }), (e) =>
      isOffshootError(e, 'INVALID_ARGUMENT'),
    );

    const items = await forkPerTest(daemon, fromFile);
    const k = await forkPerTest(daemon, 'cb');
    try {
      assert.equal(sql(items.path, 'SELECT group_concat(label) FROM items;').trim(), 'one,two');
      assert.equal(sql(k.path, 'SELECT v FROM k;').trim(), '42');
    } finally {
      await items.close();
      await k.close();
    }
  });

  test('bad seed SQL fails the seeding', async () => {
    await assert.rejects(
      seedOnce(daemon, { name: 'broken', seed: 'CREATE TABLE ok(a); INSERT INTO missing VALUES (1);' }),
      (e) => isOffshootError(e, 'INVALID_ARGUMENT') && /missing/.test(e.message),
    );
  });

  test('forkPerTest gives each test an isolated, writable branch that close() destroys', async () => {
    const seed = await seedOnce(daemon, { seed: SEED });
    const a = await forkPerTest(daemon, seed, { name: 'My Test: writes!' });
    const b = await forkPerTest(daemon, 'default');
    assert.match(a.branch, /^t-local-my-test-writes-[0-9a-f]{8}-\d+$/);
    assert.match(b.branch, /^t-local-default-[0-9a-f]{8}-\d+$/, 'the hint defaults to the seed name');
    assert.notEqual(a.branch, b.branch);
    assert.notEqual(a.path, b.path);

    sql(a.path, "INSERT INTO users(name) VALUES ('linus');");
    assert.equal(sql(a.path, 'SELECT count(*) FROM users;').trim(), '3');
    assert.equal(sql(b.path, 'SELECT count(*) FROM users;').trim(), '2', 'forks are isolated');
    assert.equal(typeof (await a.flush('after-insert')), 'number');

    const branches = await a.client.branches(seed.db);
    const mine = branches.find((x) => x.branch === a.branch);
    assert.equal(mine?.state, 'active');
    assert.ok(mine?.ttl !== undefined && mine.ttl !== '', 'forks carry a TTL');
    assert.equal(mine?.ephemeral, undefined, 'a named flush kept the fork');
    assert.equal(branches.find((x) => x.branch === b.branch)?.ephemeral, true, 'a test fork is ephemeral');

    await a.close();
    await a.close();
    await b.close();
    const c = await connect(daemon.sock);
    const left = (await c.branches(seed.db)).map((x) => x.branch);
    c.close();
    assert.deepEqual(left, ['main']);
  });

  test('dump gives comparable .dump text', async () => {
    const fork = await forkPerTest(daemon, 'default');
    try {
      const text = await dump(fork.path);
      assert.match(text, /CREATE TABLE users\(id INTEGER PRIMARY KEY, name TEXT\);/);
      assert.match(text, /INSERT INTO users VALUES\(2,'grace'\);/);
      const copy = join(tmp, 'copy.db');
      sql(copy, text);
      assert.equal(await dump(copy), text);
    } finally {
      await fork.close();
    }
  });
});

describe('startDaemon failures and stop', { timeout: 60_000 }, () => {
  test('a bad OFFSHOOT_BIN or bin option throws NOT_FOUND', async () => {
    const saved = process.env['OFFSHOOT_BIN'];
    process.env['OFFSHOOT_BIN'] = join(dirname(BIN), 'no-such-offshoot');
    try {
      await assert.rejects(startDaemon(), (e) => isOffshootError(e, 'NOT_FOUND') && /no-such-offshoot/.test(e.message));
    } finally {
      process.env['OFFSHOOT_BIN'] = saved;
    }
    await assert.rejects(startDaemon({ bin: dirname(BIN) }), (e) => isOffshootError(e, 'NOT_FOUND'));
  });

  test('a daemon that exits during start-up is reported with its stderr', async () => {
    await assert.rejects(
      startDaemon({ serveArgs: ['-flush-every', '-5s'] }),
      (e) => isOffshootError(e, 'UNAVAILABLE') && /flush-every/.test(e.message),
    );
  });

  test('stop is idempotent, ends the process and removes the temp dir', async () => {
    const d = await startDaemon();
    await Promise.all([d.stop(), d.stop()]);
    await d.stop();
    assert.notEqual(d.proc.exitCode ?? d.proc.signalCode, null);
    assert.equal(existsSync(d.store), false);
  });
});
