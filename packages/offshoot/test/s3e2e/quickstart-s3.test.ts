// The README quickstart end to end through ./offshoot against an s3:// store on the S3 test server, with the stock
// sqlite3 CLI as the only writer. Each step checks what the command printed, what the data is (the `.dump` of
// exports), and which objects the bucket holds.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertCleanError, dump, ensureBuilt, run, sql, type CliResult, type RunOptions } from '../e2e/cli-harness.js';
import { S3_ENDPOINT, bucketKeys, createTestBucket, s3Unavailable, type TestBucket } from '../store/s3-test-env.js';
import { S3_REGION } from './s3-store.js';

const PREFIX = 'team/qs';

const SEED_SQL = `CREATE TABLE t(x); INSERT INTO t VALUES (1);
CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
INSERT INTO notes VALUES (1, 'one'), (2, 'two'), (3, 'three');`;

const ATTEMPT_SQL = `INSERT INTO t VALUES (2);
UPDATE notes SET body = 'TWO' WHERE id = 2;
DELETE FROM notes WHERE id = 3;
CREATE TABLE extra(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO extra VALUES ('a', 1);
CREATE INDEX notes_body ON notes(body);`;

describe('README quickstart on an s3:// store', { concurrency: false }, () => {
  if (s3Unavailable('README quickstart on S3')) return;
  let bucket: TestBucket;
  let dir: string;
  let store: string;
  let checkouts: string;
  let mainDb: string;
  let attemptDb: string;
  const dumps: Record<string, string> = {};
  let scratchKeys: string[] = [];
  let exports = 0;

  /** Runs `./offshoot -store s3://… args` with the S3 settings a user would export, in a private working directory. */
  const cli = (args: readonly string[], opts: RunOptions = {}): CliResult =>
    run(['-store', store, ...args], {
      cwd: path.join(dir, 'work'),
      ...opts,
      env: {
        OFFSHOOT_S3_ENDPOINT: S3_ENDPOINT,
        OFFSHOOT_S3_PATH_STYLE: '1',
        OFFSHOOT_S3_REGION: S3_REGION,
        OFFSHOOT_CHECKOUTS: checkouts,
        TMPDIR: path.join(dir, 'tmp'),
        ...opts.env,
      },
    });

  /** Exports a target to a fresh local file and returns its path. */
  const exported = (target: string): string => {
    const out = path.join(dir, 'exports', `${exports++}.db`);
    assert.equal(cli(['export', target, out]).stdout, `${out}\n`);
    return out;
  };

  const rows = (db: string, query: string): string => sql(db, `${query};`).trim();

  /** One `status` run, as a lookup of its line for a branch. */
  const status = (): ((name: string) => string) => {
    const lines = cli(['status']).stdout.split('\n');
    return (name) => {
      const line = lines.find((l) => l.startsWith(`${name} `));
      assert.ok(line, `status lists ${name}`);
      return line;
    };
  };
  const statusLine = (name: string): string => status()(name);

  /** The bucket's keys under the store prefix, without it. */
  const keys = async (): Promise<string[]> =>
    (await bucketKeys(bucket.name)).filter((k) => k.startsWith(`${PREFIX}/`)).map((k) => k.slice(PREFIX.length + 1));

  const added = (before: readonly string[], now: readonly string[]): string[] => now.filter((k) => !before.includes(k));

  before(async () => {
    ensureBuilt();
    bucket = await createTestBucket();
    dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    for (const d of ['work', 'tmp', 'exports']) mkdirSync(path.join(dir, d));
    store = `s3://${bucket.name}/${PREFIX}`;
    checkouts = path.join(dir, 'checkouts-root');
  });

  after(async () => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    await bucket?.remove();
  });

  it('init writes only the manifest under the prefix (the CAS probe cleans up after itself)', async () => {
    const r = cli(['init']);
    assert.equal(r.stdout, `initialized store at ${store}\n`);
    assert.equal(r.stderr, '');
    assert.deepEqual(await keys(), ['offshoot.json']);
    assert.deepEqual(await bucketKeys(bucket.name), [`${PREFIX}/offshoot.json`], 'nothing outside the prefix');
    assertCleanError(cli(['init'], { expectCode: 4 }), 4, new RegExp(`store ${store} is already initialized`));
  });

  it('create app: one snapshot object and a protected main with checkpoint init', async () => {
    const before = await keys();
    assert.equal(cli(['create', 'app']).stdout, '');
    const fresh = added(before, await keys());
    assert.equal(fresh.length, 2, fresh.join(', '));
    assert.ok(fresh.includes('refs/app/main'));
    assert.ok(fresh.some((k) => /^data\/[0-9a-f]+\/1\/snapshot-0{15}1\.ltx$/.test(k)));
    assert.match(
      statusLine('app@main'),
      /^app@main state=idle storage=materialized txid=1 checkpoints=\[init\] protected$/,
    );
    const out = exported('app');
    assert.equal(rows(out, 'SELECT count(*) FROM sqlite_master'), '0');
    assert.equal(rows(out, 'PRAGMA journal_mode'), 'wal');
  });

  it('create legacy --from imports a local file without touching it', () => {
    const src = path.join(dir, 'existing.db');
    sql(
      src,
      "CREATE TABLE legacy(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO legacy VALUES (1, 'a'), (2, 'b'), (3, 'c');",
    );
    const original = dump(src);
    assert.equal(cli(['create', 'legacy', '--from', src]).stdout, '');
    assert.equal(dump(src), original);
    assert.equal(dump(exported('legacy')), original);
  });

  it('checkout materializes under OFFSHOOT_CHECKOUTS, never in the working directory', () => {
    const r = cli(['checkout', 'app']);
    mainDb = path.join(checkouts, 'checkouts', 'app', 'main.db');
    assert.equal(r.stdout, `${mainDb}\n`);
    assert.equal(rows(mainDb, 'PRAGMA journal_mode'), 'wal');
    assert.deepEqual(readdirSync(path.join(dir, 'work')), []);
  });

  it('sqlite3 writes to the checkout; checkpoint app seeded uploads one segment and moves main to txid 2', async () => {
    sql(mainDb, SEED_SQL);
    assert.match(statusLine('app@main'), /^app@main state=dirty /);
    assert.equal(
      rows(exported('app'), 'SELECT count(*) FROM sqlite_master'),
      '0',
      'nothing is durable before a checkpoint',
    );
    const before = await keys();
    assert.equal(cli(['checkpoint', 'app', 'seeded']).stdout, 'checkpoint "seeded" at txid 2\n');
    const fresh = added(before, await keys());
    assert.equal(fresh.length, 1, fresh.join(', '));
    assert.match(fresh[0] ?? '', /^data\/[0-9a-f]+\/1\/segment-0{15}2-0{15}2\.ltx$/);
    assert.match(
      statusLine('app@main'),
      /^app@main state=idle storage=materialized txid=2 checkpoints=\[init,seeded\] protected checked-out$/,
    );
    dumps.seeded = dump(mainDb);
    assert.equal(dump(exported('app@main@seeded')), dumps.seeded);
  });

  it('fork app attempt-1 --ttl 1h writes exactly base.json and the child ref', async () => {
    const before = await keys();
    assert.equal(
      cli(['fork', 'app', 'attempt-1', '--ttl', '1h']).stdout,
      'forked app@main -> app@attempt-1 at txid 2\n',
    );
    const fresh = added(before, await keys()).sort();
    assert.equal(fresh.length, 2, fresh.join(', '));
    assert.match(fresh[0] ?? '', /^data\/[0-9a-f]+\/base\.json$/);
    assert.equal(fresh[1], 'refs/app/attempt-1');
    assert.match(
      statusLine('app@attempt-1'),
      /^app@attempt-1 state=idle storage=shared txid=2 checkpoints=\[fork\] ttl=1h0m0s remaining=(1h)?\d+m\d+s$/,
    );
    assert.equal(dump(exported('app@attempt-1')), dumps.seeded);
  });

  it('a checkpoint on the fork adds one segment to the fork and leaves main as it was', async () => {
    attemptDb = cli(['checkout', 'app@attempt-1']).stdout.trim();
    assert.equal(attemptDb, path.join(checkouts, 'checkouts', 'app', 'attempt-1.db'));
    assert.equal(dump(attemptDb), dumps.seeded);
    sql(attemptDb, ATTEMPT_SQL);
    const before = await keys();
    assert.equal(cli(['checkpoint', 'app@attempt-1', 'tests-pass']).stdout, 'checkpoint "tests-pass" at txid 3\n');
    const fresh = added(before, await keys());
    assert.equal(fresh.length, 1, fresh.join(', '));
    assert.match(fresh[0] ?? '', /\/1\/segment-0{15}3-0{15}3\.ltx$/);
    dumps.attempt = dump(attemptDb);
    assert.equal(dump(exported('app@attempt-1')), dumps.attempt);
    assert.equal(dump(mainDb), dumps.seeded, 'the parent checkout is unchanged');
    assert.equal(dump(exported('app')), dumps.seeded, 'the parent head is unchanged');
  });

  it('diff prints the row-level diff, and --sql turns the left export into the right one', () => {
    const r = cli(['diff', 'app', 'app@attempt-1']);
    assert.equal(
      r.stdout,
      [
        'left:  app right: app@attempt-1',
        'schema:',
        '  + table extra',
        '      CREATE TABLE extra(k TEXT PRIMARY KEY, v) WITHOUT ROWID',
        '  + index notes_body',
        '      CREATE INDEX notes_body ON notes(body)',
        'table extra (key k): added, 1 added, 0 removed, 0 changed',
        "  + k='a' v=1",
        'table notes (key id): changed, 0 added, 1 removed, 1 changed',
        "  - id=3 body='three'",
        "  ~ id=2  body: 'two' -> 'TWO'",
        'table t (key rowid): changed, 1 added, 0 removed, 0 changed',
        '  + rowid=2 x=2',
        '',
      ].join('\n'),
    );
    const left = exported('app');
    sql(left, cli(['diff', 'app', 'app@attempt-1', '--sql']).stdout);
    assert.equal(dump(left), dumps.attempt);
  });

  it('promote app@attempt-1 --onto main --force repoints main, refreshes its checkout and keeps the old head', () => {
    const r = cli(['promote', 'app@attempt-1', '--onto', 'main', '--force']);
    assert.equal(r.stdout, 'promoted app@attempt-1 -> app@main at txid 3\n');
    assert.equal(r.stderr, 'offshoot: note: previous head of app@main kept as app@main-pre-promote\n');
    const line = status();
    assert.match(
      line('app@main'),
      /^app@main state=idle storage=shared txid=3 checkpoints=\[promote\] protected checked-out$/,
    );
    assert.match(
      line('app@main-pre-promote'),
      /^app@main-pre-promote state=idle storage=shared txid=2 checkpoints=\[fork\] ttl=24h0m0s remaining=/,
    );
    assert.equal(dump(mainDb), dumps.attempt, 'the main checkout was refreshed in place');
    assert.equal(dump(exported('app')), dumps.attempt);
    assert.equal(dump(exported('app@main-pre-promote')), dumps.seeded);
    assert.equal(dump(exported('app@attempt-1')), dumps.attempt, 'the source is unchanged');
  });

  it('rollback app --to promote abandons later txids and keeps them, dirty edits included, as the undo point', () => {
    sql(mainDb, 'DROP TABLE t;');
    assert.equal(cli(['checkpoint', 'app', 'oops']).stdout, 'checkpoint "oops" at txid 4\n');
    sql(mainDb, "INSERT INTO notes VALUES (9, 'never checkpointed');");
    dumps.beforeRollback = dump(mainDb);
    const r = cli(['rollback', 'app', '--to', 'promote']);
    assert.equal(r.stdout, `${mainDb}\n`);
    assert.match(
      r.stderr,
      /^offshoot: note: rolled back app@main to checkpoint "promote" at txid 3; abandoned txids 4-5\n/,
    );
    assert.match(r.stderr, /previous head kept as app@main-pre-rollback/);
    assert.equal(dump(mainDb), dumps.attempt);
    assert.equal(dump(exported('app')), dumps.attempt);
    const undo = exported('app@main-pre-rollback');
    assert.equal(dump(undo), dumps.beforeRollback);
    assert.equal(rows(undo, 'SELECT body FROM notes WHERE id = 9'), 'never checkpointed');
  });

  it('status lists every branch with state, storage, head, checkpoints and TTL', () => {
    const lines = cli(['status']).stdout.trimEnd().split('\n');
    assert.equal(lines.length, 6, lines.join('\n'));
    assert.match(
      lines[0] ?? '',
      /^app@attempt-1 state=idle storage=shared txid=3 checkpoints=\[fork,tests-pass\] checked-out ttl=1h0m0s remaining=(1h)?\d+m\d+s$/,
    );
    assert.match(
      lines[1] ?? '',
      /^app@main state=idle storage=shared txid=3 checkpoints=\[promote\] protected checked-out$/,
    );
    assert.match(
      lines[2] ?? '',
      /^app@main-pre-promote state=idle storage=shared txid=2 checkpoints=\[fork\] ttl=24h0m0s remaining=\d+h\d+m\d+s meta=\{"offshoot\.safety":"pre-promote","offshoot\.of":"main"\}$/,
    );
    assert.match(
      lines[3] ?? '',
      /^app@main-pre-rollback state=idle storage=shared txid=5 checkpoints=\[fork\] ttl=24h0m0s remaining=\d+h\d+m\d+s meta=\{"offshoot\.safety":"pre-rollback","offshoot\.of":"main"\}$/,
    );
    assert.match(lines[4] ?? '', /^legacy@main state=idle storage=materialized txid=1 checkpoints=\[init\] protected$/);
    assert.match(lines[5] ?? '', /^ro-cache: \d+ entries, \d+ bytes used, budget 2147483648 bytes$/);
  });

  it('destroy removes a branch and its checkout, never the objects main reads through', async () => {
    assert.equal(cli(['destroy', 'app@attempt-1']).stdout, '');
    assert.equal(existsSync(attemptDb), false);
    assert.equal((await keys()).includes('refs/app/attempt-1'), false);
    assert.equal(dump(exported('app')), dumps.attempt);
    // A scratch fork with its own segment, destroyed: the garbage the next gc runs must find and delete.
    const before = await keys();
    cli(['fork', 'app', 'scratch']);
    sql(cli(['checkout', 'app@scratch']).stdout.trim(), "INSERT INTO notes VALUES (50, 'scratch');");
    cli(['checkpoint', 'app@scratch', 'wip']);
    scratchKeys = added(before, await keys()).filter((k) => k.startsWith('data/'));
    assert.equal(scratchKeys.length, 2, `the scratch fork owns base.json and one segment: ${scratchKeys.join(', ')}`);
    cli(['destroy', 'app@scratch']);
    assert.equal((await keys()).includes('refs/app/scratch'), false);
  });

  it('gc --grace 0s twice: the first run tombstones what nothing reaches, the second deletes exactly that', async () => {
    const before = await keys();
    const first = cli(['gc', '--grace', '0s']);
    const m = /^gc: tombstoned (\d+), deleted 0 objects\n$/.exec(first.stdout);
    assert.ok(m, first.stdout);
    const tombstoned = Number(m[1]);
    assert.ok(tombstoned >= 2, `the scratch fork's objects are tombstoned (${tombstoned})`);
    // The tombstone list, and the store-wide GC lease the pass held (left behind expired).
    assert.deepEqual(added(before, await keys()).sort(), ['gc/lease', 'gc/tombstones']);
    const second = cli(['gc', '--grace', '0s']);
    assert.equal(second.stdout, `gc: tombstoned 0, deleted ${tombstoned} objects\n`);
    const now = await keys();
    const gone = before.filter((k) => !now.includes(k));
    assert.equal(gone.length, tombstoned);
    for (const k of scratchKeys) assert.ok(gone.includes(k), `${k} was collected`);
    assert.ok(
      gone.every((k) => k.startsWith('data/')),
      `only data objects are collected: ${gone.join(', ')}`,
    );
    assert.equal(cli(['gc', '--grace', '0s']).stdout, 'gc: tombstoned 0, deleted 0 objects\n');

    // Every branch and checkpoint still materializes from what is left, with a cold cache.
    rmSync(path.join(checkouts, 'checkouts-ro'), { recursive: true, force: true });
    assert.equal(dump(exported('app')), dumps.attempt);
    assert.equal(dump(exported('app@main@promote')), dumps.attempt);
    assert.equal(dump(exported('app@main-pre-promote')), dumps.seeded);
    assert.equal(dump(exported('app@main-pre-rollback')), dumps.beforeRollback);
    assert.equal(rows(exported('legacy'), 'SELECT count(*) FROM legacy'), '3');
    assert.equal(cli(['checkout', 'app']).stdout, `${mainDb}\n`);
    assert.equal(dump(mainDb), dumps.attempt);
  });
});
