// The README quickstart, end to end through ./offshoot, with the stock sqlite3 CLI as the only writer. Every step
// checks what the command printed and what the data is: in the checkouts and in `export` outputs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  baseEnv,
  dump,
  ensureBuilt,
  holdSqlite3,
  repoRoot,
  sql,
  statusMap,
  tempStore,
  type TempStore,
} from './cli-harness.js';

let ts: TempStore;
let mainDb: string;
let attemptDb: string;

/** Exports a target to a fresh file and returns its path. */
function exported(target: string, name: string): string {
  const out = ts.path('exports', `${name}.db`);
  const r = ts.run(['export', target, out]);
  assert.equal(r.stdout, `${out}\n`);
  return out;
}

function rows(db: string, query: string): string {
  return sql(db, `${query};`).trim();
}

function statusLine(name: string): string {
  const line = ts
    .run(['status'])
    .stdout.split('\n')
    .find((l) => l.startsWith(`${name} `));
  assert.ok(line, `status lists ${name}`);
  return line;
}

const SEED_SQL = `CREATE TABLE t(x); INSERT INTO t VALUES (1);
CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
INSERT INTO notes VALUES (1, 'one'), (2, 'two'), (3, 'three');`;

const ATTEMPT_SQL = `INSERT INTO t VALUES (2);
UPDATE notes SET body = 'TWO' WHERE id = 2;
DELETE FROM notes WHERE id = 3;
CREATE TABLE extra(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO extra VALUES ('a', 1);
CREATE INDEX notes_body ON notes(body);`;

const dumps: Record<string, string> = {};

before(() => {
  ensureBuilt();
  ts = tempStore();
});

after(() => ts.cleanup());

describe('README quickstart with sqlite3 as the writer', () => {
  test('init creates the store and says where', () => {
    const r = ts.run(['init']);
    assert.equal(r.stdout, `initialized store at ${ts.store}\n`);
    assert.equal(r.stderr, '');
    assert.ok(existsSync(join(ts.store, 'offshoot.json')));
  });

  test('create app: an empty database whose main is protected, with checkpoint init', () => {
    const r = ts.run(['create', 'app']);
    assert.equal(r.stdout, '');
    assert.match(
      statusLine('app@main'),
      /^app@main state=idle storage=materialized txid=1 checkpoints=\[init\] protected$/,
    );
    const out = exported('app', 'app-init');
    assert.equal(rows(out, 'SELECT count(*) FROM sqlite_master'), '0');
    assert.equal(rows(out, 'PRAGMA journal_mode'), 'wal');
  });

  test('create --from imports a file with a pending -wal of a still-open connection, and never touches it', async () => {
    const src = ts.path('existing.db');
    sql(
      src,
      `PRAGMA journal_mode=WAL; CREATE TABLE legacy(id INTEGER PRIMARY KEY, v TEXT);
      INSERT INTO legacy VALUES (1, 'in the main file'), (2, 'also main');`,
    );
    // A writer that stays open keeps its commits in the -wal (no checkpoint on close, no autocheckpoint).
    const writer = await holdSqlite3(
      src,
      `PRAGMA wal_autocheckpoint=0;
       INSERT INTO legacy VALUES (3, 'only in the wal');
       UPDATE legacy SET v = 'changed in the wal' WHERE id = 1;`,
    );
    try {
      assert.ok(statSync(`${src}-wal`).size > 0, 'the source has a pending -wal');
      const mainBefore = readFileSync(src);
      const walBefore = readFileSync(`${src}-wal`);

      const r = ts.run(['create', 'legacy', '--from', src]);
      assert.equal(r.stdout, '');

      assert.ok(readFileSync(src).equals(mainBefore), 'the source main file is byte-identical');
      assert.ok(readFileSync(`${src}-wal`).equals(walBefore), 'the source -wal is byte-identical');
      const out = exported('legacy', 'legacy-init');
      assert.equal(
        rows(out, 'SELECT id, v FROM legacy ORDER BY id'),
        '1|changed in the wal\n2|also main\n3|only in the wal',
      );
      assert.equal(dump(out), dump(src));
    } finally {
      await writer.close();
    }
    assert.match(
      statusLine('legacy@main'),
      /^legacy@main state=idle storage=materialized txid=1 checkpoints=\[init\] protected$/,
    );
  });

  test('checkout prints a plain SQLite file in WAL mode at a stable path', () => {
    const r = ts.run(['checkout', 'app']);
    mainDb = join(ts.store, 'checkouts', 'app', 'main.db');
    assert.equal(r.stdout, `${mainDb}\n`);
    assert.equal(ts.run(['path', 'app']).stdout, `${mainDb}\n`);
    assert.equal(rows(mainDb, 'PRAGMA journal_mode'), 'wal');
    assert.match(statusLine('app@main'), / state=idle .* checked-out$/);
  });

  test('sqlite3 writes to the checkout; status reads dirty until a checkpoint', () => {
    sql(mainDb, SEED_SQL);
    assert.match(statusLine('app@main'), /^app@main state=dirty /);
    assert.equal(
      rows(exported('app', 'app-before-seed'), 'SELECT count(*) FROM sqlite_master'),
      '0',
      'writes are not durable before a checkpoint',
    );
  });

  test('checkpoint app seeded records the writes at txid 2', () => {
    const r = ts.run(['checkpoint', 'app', 'seeded']);
    assert.equal(r.stdout, 'checkpoint "seeded" at txid 2\n');
    assert.match(
      statusLine('app@main'),
      /^app@main state=idle storage=materialized txid=2 checkpoints=\[init,seeded\] protected checked-out$/,
    );
    dumps.seeded = dump(mainDb);
    assert.equal(dump(exported('app', 'app-seeded')), dumps.seeded);
    assert.equal(dump(exported('app@main@seeded', 'app-main-seeded')), dumps.seeded);
    assert.equal(rows(mainDb, 'SELECT x FROM t'), '1');
  });

  test('fork app attempt-1 --ttl 1h shares storage and starts at checkpoint fork', () => {
    const r = ts.run(['fork', 'app', 'attempt-1', '--ttl', '1h']);
    assert.equal(r.stdout, 'forked app@main -> app@attempt-1 at txid 2\n');
    assert.match(
      statusLine('app@attempt-1'),
      /^app@attempt-1 state=idle storage=shared txid=2 checkpoints=\[fork\] ttl=1h0m0s remaining=(1h)?\d+m\d+s$/,
    );
    assert.equal(dump(exported('app@attempt-1', 'attempt-fork')), dumps.seeded);
  });

  test('a write on the fork leaves main untouched; checkpoint app@attempt-1 tests-pass', () => {
    attemptDb = ts.run(['checkout', 'app@attempt-1']).stdout.trim();
    assert.equal(attemptDb, join(ts.store, 'checkouts', 'app', 'attempt-1.db'));
    sql(attemptDb, ATTEMPT_SQL);
    const r = ts.run(['checkpoint', 'app@attempt-1', 'tests-pass']);
    assert.equal(r.stdout, 'checkpoint "tests-pass" at txid 3\n');
    assert.match(
      statusLine('app@attempt-1'),
      /^app@attempt-1 state=idle storage=shared txid=3 checkpoints=\[fork,tests-pass\] checked-out ttl=1h0m0s/,
    );
    dumps.attempt = dump(attemptDb);
    assert.equal(dump(exported('app@attempt-1', 'attempt-pass')), dumps.attempt);
    assert.equal(rows(attemptDb, 'SELECT x FROM t ORDER BY x'), '1\n2');
    assert.equal(dump(mainDb), dumps.seeded, 'the parent checkout is unchanged');
    assert.equal(dump(exported('app', 'app-after-fork-write')), dumps.seeded, 'the parent head is unchanged');
  });

  test('diff prints a row-level diff with the targets as typed', () => {
    const r = ts.run(['diff', 'app', 'app@attempt-1']);
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
    assert.equal(r.stderr, '');
  });

  test('diff --summary prints per-table counts and statuses', () => {
    const r = ts.run(['diff', 'app', 'app@attempt-1', '--summary']);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split(/\s+/).join(' '));
    assert.deepEqual(lines, [
      'left: app right: app@attempt-1',
      'TABLE app app@attempt-1 STATUS',
      'extra - 1 added',
      'notes 3 2 changed (-1)',
      't 1 2 changed (+1)',
      '3 tables: 0 same, 2 changed, 1 added, 0 removed',
    ]);
  });

  test('diff --json is one document with rows keyed as in the tables', () => {
    const doc = ts.json<{
      left: string;
      right: string;
      schema: unknown[];
      tables: Array<{
        table: string;
        status: string;
        added: unknown[];
        removed: unknown[];
        changed: unknown[];
        left_count: number;
        right_count: number;
      }>;
    }>(['diff', 'app', 'app@attempt-1']);
    assert.equal(doc.left, 'app');
    assert.equal(doc.right, 'app@attempt-1');
    assert.equal(doc.schema.length, 2);
    const byName = new Map(doc.tables.map((t) => [t.table, t]));
    assert.deepEqual(byName.get('t')?.added, [{ rowid: 2, x: 2 }]);
    assert.deepEqual(byName.get('notes')?.removed, [{ id: 3, body: 'three' }]);
    assert.equal(byName.get('notes')?.changed.length, 1);
    assert.equal(byName.get('extra')?.status, 'added');
    assert.equal(byName.get('t')?.right_count, 2);
  });

  test('diff --sql applied to the left export with sqlite3 reproduces the right export', () => {
    const script = ts.run(['diff', 'app', 'app@attempt-1', '--sql']).stdout;
    assert.match(script, /^PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n/);
    assert.match(script, /COMMIT;\n$/);
    const left = exported('app', 'diff-left');
    const right = exported('app@attempt-1', 'diff-right');
    const copy = ts.path('exports', 'diff-applied.db');
    copyFileSync(left, copy);
    sql(copy, script);
    assert.equal(dump(copy), dump(right));
    assert.equal(
      ts.run(['diff', 'app@attempt-1', 'app@attempt-1@tests-pass']).stdout,
      'left:  app@attempt-1 right: app@attempt-1@tests-pass\nno differences\n',
    );
  });

  test('diff --sql over a rebuilt table (a column added) carries the same rows and schema', () => {
    ts.run(['fork', 'app', 'altered']);
    const db = ts.run(['checkout', 'app@altered']).stdout.trim();
    sql(db, "ALTER TABLE notes ADD COLUMN tag TEXT DEFAULT 'x'; UPDATE notes SET tag = 'y' WHERE id = 1;");
    ts.run(['checkpoint', 'app@altered', 'altered']);
    const copy = ts.path('exports', 'altered-applied.db');
    copyFileSync(exported('app', 'altered-left'), copy);
    sql(copy, ts.run(['diff', 'app', 'app@altered', '--sql']).stdout);
    // A rebuilt table is re-created after the untouched ones, so only the order of .dump lines may differ.
    const sorted = (text: string) => text.split('\n').sort().join('\n');
    assert.equal(sorted(dump(copy)), sorted(dump(exported('app@altered', 'altered-right'))));
    ts.run(['destroy', 'app@altered']);
  });

  test('promote app@attempt-1 --onto main --force repoints main and keeps the old head', () => {
    const r = ts.run(['promote', 'app@attempt-1', '--onto', 'main', '--force']);
    assert.equal(r.stdout, 'promoted app@attempt-1 -> app@main at txid 3\n');
    assert.equal(r.stderr, 'offshoot: note: previous head of app@main kept as app@main-pre-promote\n');
    assert.match(
      statusLine('app@main'),
      /^app@main state=idle storage=shared txid=3 checkpoints=\[promote\] protected checked-out$/,
    );
    assert.match(
      statusLine('app@main-pre-promote'),
      /^app@main-pre-promote state=idle storage=shared txid=2 checkpoints=\[fork\] ttl=24h0m0s remaining=/,
    );
    assert.equal(dump(mainDb), dumps.attempt, 'the main checkout was refreshed in place');
    assert.equal(dump(exported('app', 'main-promoted')), dumps.attempt);
    assert.equal(dump(exported('app@main-pre-promote', 'pre-promote')), dumps.seeded);
    assert.equal(dump(exported('app@attempt-1', 'attempt-after-promote')), dumps.attempt, 'the source is unchanged');
  });

  test('rollback app --to promote abandons later txids and keeps them, dirty edits included, as the undo point', () => {
    sql(mainDb, 'DROP TABLE t;');
    assert.equal(ts.run(['checkpoint', 'app', 'oops']).stdout, 'checkpoint "oops" at txid 4\n');
    sql(mainDb, "INSERT INTO notes VALUES (9, 'never checkpointed');");
    dumps.beforeRollback = dump(mainDb);

    const r = ts.run(['rollback', 'app', '--to', 'promote']);
    assert.equal(r.stdout, `${mainDb}\n`);
    assert.equal(
      r.stderr,
      [
        'offshoot: note: rolled back app@main to checkpoint "promote" at txid 3; abandoned txids 4-5',
        "offshoot: note: previous head kept as app@main-pre-rollback; undo with 'offshoot promote app@main-pre-rollback --onto main --force'",
        '',
      ].join('\n'),
    );
    assert.equal(dump(mainDb), dumps.attempt);
    assert.equal(rows(mainDb, 'SELECT count(*) FROM t'), '2');
    assert.equal(dump(exported('app', 'main-rolled-back')), dumps.attempt);
    const undo = exported('app@main-pre-rollback', 'pre-rollback');
    assert.equal(dump(undo), dumps.beforeRollback, 'the undo point holds the dirty edit too');
    assert.equal(rows(undo, 'SELECT body FROM notes WHERE id = 9'), 'never checkpointed');
    assert.match(
      statusLine('app@main'),
      /^app@main state=idle storage=shared txid=3 checkpoints=\[promote\] protected checked-out$/,
    );
  });

  test('status lists every branch with state, storage, head, checkpoints and TTL, then the ro-cache', () => {
    const lines = ts.run(['status']).stdout.trimEnd().split('\n');
    assert.equal(lines.length, 6);
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
    // Usage is shown against the budget the CLI trims to: $OFFSHOOT_RO_CACHE_BUDGET, else 2 GiB; 0 is unlimited.
    assert.match(lines[5] ?? '', /^ro-cache: \d+ entries, \d+ bytes used, budget 2147483648 bytes$/);
    const roLine = (env: NodeJS.ProcessEnv, args: string[] = []) =>
      ts
        .run(['status', ...args], { env })
        .stdout.trim()
        .split('\n')
        .at(-1);
    assert.match(roLine({ OFFSHOOT_RO_CACHE_BUDGET: '0' }) ?? '', /bytes used \(budget: unlimited\)$/);
    assert.match(roLine({ OFFSHOOT_RO_CACHE_BUDGET: '64M' }) ?? '', /bytes used, budget 67108864 bytes$/);
    assert.match(roLine({}, ['-ro-cache-budget', '1K']) ?? '', /bytes used, budget 1024 bytes$/);
    assert.match(ts.run(['status', 'legacy']).stdout, /^legacy@main [^\n]*\nro-cache: /);
  });

  test('destroy app@attempt-1 removes the branch and its checkout, never the storage main reads through', () => {
    const r = ts.run(['destroy', 'app@attempt-1']);
    assert.equal(r.stdout, '');
    assert.equal(existsSync(attemptDb), false);
    assert.equal(statusMap(ts).has('app@attempt-1'), false);
    assert.equal(dump(exported('app', 'main-after-destroy')), dumps.attempt);
  });

  test('gc collects only what no branch reaches; every branch and checkpoint still exports', () => {
    const first = ts.run(['gc']);
    assert.match(first.stdout, /^gc: tombstoned \d+, deleted 0 objects\n$/);
    const second = ts.run(['gc', '--grace', '0s']);
    assert.match(second.stdout, /^gc: tombstoned \d+, deleted \d+ objects\n$/);
    const third = ts.run(['gc', '--grace', '0s']);
    assert.equal(third.stdout, 'gc: tombstoned 0, deleted 0 objects\n');
    assert.equal(dump(exported('app', 'gc-main')), dumps.attempt);
    assert.equal(dump(exported('app@main@promote', 'gc-main-promote')), dumps.attempt);
    assert.equal(dump(exported('app@main-pre-promote', 'gc-pre-promote')), dumps.seeded);
    assert.equal(dump(exported('app@main-pre-rollback', 'gc-pre-rollback')), dumps.beforeRollback);
    assert.equal(rows(exported('legacy', 'gc-legacy'), 'SELECT count(*) FROM legacy'), '3');
    assert.equal(ts.run(['checkout', 'app']).stdout, `${mainDb}\n`);
    assert.equal(dump(mainDb), dumps.attempt);
  });
});

describe('make demo', () => {
  test('scripts/demo.sh runs the quickstart to completion with exit 0', () => {
    const r = spawnSync(join(repoRoot, 'scripts/demo.sh'), [], {
      cwd: ts.dir,
      env: baseEnv({ TMPDIR: ts.path('tmp') }),
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `demo.sh failed:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /demo done: forked, diffed, promoted, rolled back, and cleaned up\n$/);
    assert.match(r.stdout, /promoted app@attempt-1 -> app@main at txid 3/);
    assert.match(r.stdout, /\n3\n/, 'the rollback brought the three rows back');
  });
});
