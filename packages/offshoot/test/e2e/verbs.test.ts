// Every verb through ./offshoot: the happy path, and each refusal with its exit code (2 usage, 3 not found,
// 4 exists or conflict, 5 protected, 6 busy or leased) as one clean stderr line.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  assertCleanError,
  dump,
  ensureBuilt,
  filesUnder,
  holdSqlite3,
  sql,
  statusMap,
  tempStore,
  type TempStore,
} from './cli-harness.js';

let ts: TempStore;
let mainDb: string;
let oneDump: string;

function dataFiles(): string[] {
  return filesUnder(join(ts.store, 'data'));
}

function exportDump(target: string): string {
  const out = ts.path(
    'exports',
    `${target.replaceAll('@', '_')}-${Date.now()}-${Math.random().toString(16).slice(2)}.db`,
  );
  ts.run(['export', target, out]);
  return dump(out);
}

type Refusal = [args: string[], code: number, message?: RegExp];

/** Runs independent refused commands at once and checks each exits with its code and one clean stderr line. */
async function refusals(cases: Refusal[]): Promise<void> {
  const results = await Promise.all(cases.map(([args]) => ts.runAsync(args, { expectCode: 'any' })));
  results.forEach((r, i) => {
    const [args, code, message] = cases[i] as Refusal;
    try {
      assertCleanError(r, code, message);
    } catch (err) {
      assert.fail(`offshoot ${args.join(' ')}: ${(err as Error).message}`);
    }
  });
}

before(() => {
  ensureBuilt();
  ts = tempStore({ init: true });
  ts.run(['create', 'app']);
  mainDb = ts.run(['checkout', 'app']).stdout.trim();
  sql(mainDb, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one');");
  ts.run(['checkpoint', 'app', 'one']);
  oneDump = dump(mainDb);
});

after(() => ts.cleanup());

describe('create', () => {
  test('an existing database is a conflict (4); a bad name, file or flag is a usage error (2)', async () => {
    await refusals([
      [['create', 'app'], 4, /database app already exists/],
      [['create', 'Bad_Name'], 2, /invalid database name/],
      [['create', 'x', '--from', ts.path('missing.db')], 2, /cannot import/],
      [['create', 'x', '--bogus'], 2],
    ]);
    assert.equal(statusMap(ts).has('x@main'), false);
  });
});

describe('checkout and path', () => {
  test('a missing branch or database is not found (3)', async () => {
    await refusals([
      [['checkout', 'app@nope'], 3, /no branch app@nope/],
      [['checkout', 'nodb'], 3],
      [['checkout', 'app@Bad'], 2],
    ]);
    assert.equal(existsSync(join(ts.store, 'checkouts', 'app', 'nope.db')), false);
  });

  test('a clean, current checkout is reused and its path is stable', () => {
    const doc = ts.json<{ path: string; reused: boolean; txid: number }>(['checkout', 'app']);
    assert.deepEqual(doc, { path: mainDb, reused: true, txid: 2, dirty: false });
    assert.equal(ts.run(['path', 'app@main']).stdout, `${mainDb}\n`);
    assert.equal(ts.run(['path', 'app@not-yet']).stdout, `${join(ts.store, 'checkouts', 'app', 'not-yet.db')}\n`);
  });

  test('checkout --at CP --read-only gives a 0444 file that a repeat call serves again', () => {
    const first = ts.json<{ path: string; cached: boolean }>(['checkout', 'app', '--at', 'one', '--read-only']);
    assert.equal(first.path, join(ts.store, 'checkouts-ro', 'app', 'main@one.db'));
    assert.equal(first.cached, false);
    assert.equal(statSync(first.path).mode & 0o777, 0o444);
    assert.equal(dump(first.path), oneDump);
    const before = statSync(first.path);
    const again = ts.run(['checkout', 'app@main', '--at', 'one', '--read-only']);
    assert.equal(again.stdout, `${first.path}\n`);
    assert.equal(ts.json<{ cached: boolean }>(['checkout', 'app', '--at', 'one', '--read-only']).cached, true);
    const later = statSync(first.path);
    assert.equal(later.ino, before.ino, 'the same file is served, not re-materialized');
    assert.equal(later.mtimeMs, before.mtimeMs);
    assert.ok(existsSync(`${first.path}.last-used`));
    const forced = ts.json<{ path: string; cached: boolean }>([
      'checkout',
      'app',
      '--at',
      'one',
      '--read-only',
      '--force',
    ]);
    assert.equal(forced.cached, false);
    assert.equal(dump(forced.path), oneDump);
  });

  test('--at and --read-only go together; an unknown checkpoint is not found', async () => {
    await refusals([
      [['checkout', 'app', '--at', 'one'], 2, /--at and --read-only/],
      [['checkout', 'app', '--read-only'], 2],
      [['checkout', 'app', '--at', 'nope', '--read-only'], 3, /nope/],
    ]);
  });
});

describe('checkpoint', () => {
  test('a duplicate name is a conflict (4) and writes nothing', () => {
    sql(mainDb, "INSERT INTO t VALUES (2, 'two');");
    const before = dataFiles();
    assertCleanError(ts.run(['checkpoint', 'app', 'one'], { expectCode: 'any' }), 4, /checkpoint "one" already exists/);
    assert.deepEqual(dataFiles(), before);
    assert.equal(statusMap(ts).get('app@main')?.state, 'dirty', 'the edit is still only in the checkout');
  });

  test('records the edit at head+1 with --meta; without changes it names the current head', () => {
    const doc = ts.json<{ name: string; txid: number; kind: string; pages: number }>([
      'checkpoint',
      'app',
      'two',
      '--meta',
      'run=e2e',
    ]);
    assert.equal(doc.name, 'two');
    assert.equal(doc.txid, 3);
    assert.equal(doc.kind, 'segment');
    assert.ok(doc.pages >= 1);
    const same = ts.run(['checkpoint', 'app', 'two-again']);
    assert.equal(same.stdout, 'checkpoint "two-again" at txid 3\n');
    const cp = statusMap(ts)
      .get('app@main')
      ?.checkpoints_v2.find((c) => c.name === 'two');
    assert.equal(cp?.txid, 3);
    assert.equal(exportDump('app@main@two'), dump(mainDb));
  });

  test('a branch without a checkout, a missing branch, a bad name', async () => {
    ts.run(['fork', 'app', 'no-checkout']);
    await refusals([
      [['checkpoint', 'app@no-checkout', 'x'], 3, /no checkout of app@no-checkout/],
      [['checkpoint', 'app@ghost', 'x'], 3],
      [['checkpoint', 'app', 'Bad Name'], 2],
      [['checkpoint', 'app'], 2, /missing arguments/],
    ]);
    ts.run(['destroy', 'app@no-checkout']);
  });
});

describe('fork', () => {
  test('at the head and --at a checkpoint', () => {
    assert.equal(ts.run(['fork', 'app', 'f-head']).stdout, 'forked app@main -> app@f-head at txid 3\n');
    assert.equal(
      ts.run(['fork', 'app', 'f-one', '--at', 'one', '--ttl', '30m']).stdout,
      'forked app@main -> app@f-one at txid 2\n',
    );
    assert.equal(exportDump('app@f-one'), oneDump);
    assert.equal(exportDump('app@f-head'), dump(mainDb));
    const s = statusMap(ts);
    assert.equal(s.get('app@f-one')?.ttl, '30m0s');
    assert.equal(s.get('app@f-one')?.parent, 'app@main@2');
    assert.deepEqual(s.get('app@f-head')?.checkpoints, ['fork']);
    assert.equal(s.get('app@f-head')?.protected, false);
  });

  test('the source may name its fork point, a checkpoint or a moment, as --at does', () => {
    assert.equal(ts.run(['fork', 'app@main@one', 'f-at-one']).stdout, 'forked app@main -> app@f-at-one at txid 2\n');
    assert.equal(ts.run(['fork', 'app@main@tx:2', 'f-tx-2']).stdout, 'forked app@main -> app@f-tx-2 at txid 2\n');
    assert.equal(exportDump('app@f-tx-2'), oneDump);
    assert.equal(statusMap(ts).get('app@f-at-one')?.parent, 'app@main@2');
  });

  test('an existing child (4), an unknown --at or moment (3), --ttl none or 0s, a fork point given twice (2)', async () => {
    const before = dataFiles();
    await refusals([
      [['fork', 'app', 'f-head'], 4, /app@f-head already exists/],
      [['fork', 'app', 'x', '--at', 'nope'], 3, /no checkpoint "nope"/],
      [['fork', 'app', 'x', '--ttl', 'none'], 2, /TTL must be positive/],
      [['fork', 'app', 'x', '--ttl', '0s'], 2],
      [['fork', 'app', 'x', '--ttl', 'soon'], 2],
      [['fork', 'app@ghost', 'x'], 3],
      [['fork', 'app@main@one', 'x', '--at', 'one'], 2, /fork point twice/],
      [['fork', 'app@main@tx:999', 'x'], 3],
    ]);
    assert.equal(statusMap(ts).has('app@x'), false);
    assert.deepEqual(dataFiles(), before, 'a refused fork writes nothing');
  });
});

describe('touch', () => {
  test('--ttl 2h sets the TTL that status shows; --ttl none clears it', () => {
    const set = ts.run(['touch', 'app@f-head', '--ttl', '2h']);
    assert.match(set.stdout, /^touched app@f-head ttl=2h0m0s touched_at=\d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
    assert.match(ts.run(['status']).stdout, /^app@f-head .* ttl=2h0m0s remaining=(2h0m0s|1h59m\d+s)$/m);
    const keep = ts.json<{ ttl?: string }>(['touch', 'app@f-head']);
    assert.equal(keep.ttl, '2h0m0s', 'no --ttl keeps it');
    assert.match(ts.run(['touch', 'app@f-head', '--ttl', 'none']).stdout, /^touched app@f-head ttl=none touched_at=/);
    const s = statusMap(ts).get('app@f-head');
    assert.equal(s?.ttl, undefined);
    assert.doesNotMatch(ts.run(['status']).stdout, /^app@f-head .*ttl=/m);
  });

  test('a missing branch is not found; a bad TTL is a usage error', async () => {
    await refusals([
      [['touch', 'app@ghost'], 3],
      [['touch', 'app@f-head', '--ttl', 'forever'], 2],
    ]);
  });
});

describe('destroy, protect and unprotect', () => {
  test('main is protected: destroy without --force is refused (5), with --force it goes', () => {
    ts.run(['create', 'doomed']);
    const doomedDb = ts.run(['checkout', 'doomed']).stdout.trim();
    assertCleanError(ts.run(['destroy', 'doomed'], { expectCode: 'any' }), 5, /doomed@main is protected/);
    assert.ok(statusMap(ts).has('doomed@main'));
    const r = ts.run(['destroy', 'doomed', '--force']);
    assert.equal(r.stdout, '');
    assert.equal(statusMap(ts).has('doomed@main'), false);
    assert.equal(existsSync(doomedDb), false, 'the checkout went with it');
    assertCleanError(ts.run(['export', 'doomed', ts.path('doomed.db')], { expectCode: 'any' }), 3);
    assertCleanError(ts.run(['destroy', 'doomed'], { expectCode: 'any' }), 3);
  });

  test('protect and unprotect any branch; destroy then needs, then does not need, --force', () => {
    ts.run(['fork', 'app', 'guarded']);
    assert.equal(ts.run(['protect', 'app@guarded']).stdout, 'protected app@guarded\n');
    assert.equal(ts.run(['protect', 'app@guarded']).stdout, 'app@guarded was already protected\n');
    assert.match(ts.run(['status']).stdout, /^app@guarded .* protected$/m);
    assertCleanError(ts.run(['destroy', 'app@guarded'], { expectCode: 'any' }), 5);
    assertCleanError(ts.run(['promote', 'app@f-head', '--onto', 'guarded'], { expectCode: 'any' }), 5);
    assert.equal(ts.run(['unprotect', 'app@guarded']).stdout, 'unprotected app@guarded\n');
    assert.equal(ts.run(['unprotect', 'app@guarded']).stdout, 'app@guarded was already unprotected\n');
    assert.equal(ts.run(['destroy', 'app@guarded']).stdout, '');
    assert.equal(statusMap(ts).has('app@guarded'), false);
    assertCleanError(ts.run(['protect', 'app@guarded'], { expectCode: 'any' }), 3);
  });
});

describe('promote and rollback', () => {
  test('promote onto a protected branch without --force is refused (5) and changes nothing', () => {
    const before = statusMap(ts).get('app@main');
    assertCleanError(
      ts.run(['promote', 'app@f-one', '--onto', 'main'], { expectCode: 'any' }),
      5,
      /app@main is protected; to promote onto it takes force.*--force/,
    );
    const after = statusMap(ts).get('app@main');
    assert.deepEqual(after, before);
    assert.equal(statusMap(ts).has('app@main-pre-promote'), false);
  });

  test('promote onto an unprotected branch, onto itself, onto a missing branch', async () => {
    const r = ts.run(['promote', 'app@f-one', '--onto', 'f-head']);
    assert.equal(r.stdout, 'promoted app@f-one -> app@f-head at txid 2\n');
    assert.equal(exportDump('app@f-head'), oneDump);
    assert.equal(exportDump('app@f-head-pre-promote'), dump(mainDb));
    await refusals([
      [['promote', 'app@f-one', '--onto', 'f-one'], 2, /onto itself/],
      [['promote', 'app@f-one', '--onto', 'ghost'], 3],
      [['promote', 'app@f-one'], 2],
    ]);
  });

  test('rollback needs --to a known checkpoint', () => {
    assertCleanError(ts.run(['rollback', 'app'], { expectCode: 'any' }), 2);
    assertCleanError(ts.run(['rollback', 'app', '--to', 'nope'], { expectCode: 'any' }), 3, /no checkpoint "nope"/);
    const doc = ts.json<{ txid: number; checkpoint: string; abandoned?: { from: number; to: number }; backup: string }>(
      ['rollback', 'app@f-head', '--to', 'promote'],
    );
    assert.equal(doc.txid, 2);
    assert.equal(doc.backup, 'f-head-pre-rollback');
  });
});

describe('the rollback note', () => {
  test('names the exact undo command, with --force exactly when the branch is protected, and it runs as printed', () => {
    const own = tempStore({ init: true });
    try {
      own.run(['create', 'u']);
      const db = own.run(['checkout', 'u']).stdout.trim();
      sql(db, 'CREATE TABLE t(v); INSERT INTO t VALUES (1);');
      own.run(['checkpoint', 'u', 'a']);
      own.run(['fork', 'u', 'f']);
      sql(own.run(['checkout', 'u@f']).stdout.trim(), 'INSERT INTO t VALUES (2);');
      own.run(['checkpoint', 'u@f', 'b']);
      sql(db, 'INSERT INTO t VALUES (3);');
      own.run(['checkpoint', 'u', 'c']);
      for (const [target, to, undo] of [
        ['u', 'a', 'offshoot promote u@main-pre-rollback --onto main --force'],
        ['u@f', 'fork', 'offshoot promote u@f-pre-rollback --onto f'],
      ] as const) {
        const before = dump(own.run(['checkout', target]).stdout.trim());
        const r = own.run(['rollback', target, '--to', to]);
        assert.equal(/undo with '([^']+)'/.exec(r.stderr)?.[1], undo, r.stderr);
        // Run exactly as printed, it restores what the rollback replaced.
        assert.equal(own.run(undo.split(' ').slice(1)).code, 0, undo);
        assert.equal(dump(own.run(['checkout', target]).stdout.trim()), before);
      }
      own.run(['fork', 'u', 'g']);
      const doc = own.json<{ undo: string }>(['rollback', 'u@g', '--to', 'fork']);
      assert.equal(doc.undo, 'offshoot promote u@g-pre-rollback --onto g');
    } finally {
      own.cleanup();
    }
  });
});

describe('lease', () => {
  test('acquire, list, release; another holder is refused (6)', () => {
    const acquired = ts.run(['lease', 'acquire', 'app@f-one', '--ttl', '1m']);
    assert.match(
      acquired.stdout,
      /^acquired app@f-one as \S+\/\d+\/[0-9a-f]{16} \(epoch \d+\) until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/,
    );
    assert.match(acquired.stderr, /^offshoot: note: this command exits immediately; the lease expires unless/);
    const list = ts.run(['lease', 'list']);
    assert.match(list.stdout, /^app@f-one held by \S+ epoch=\d+ until \d{4}-/m);
    const leases = ts.json<{ leases: Array<{ branch: string; live: boolean; holder: string }> }>([
      'lease',
      'list',
    ]).leases;
    assert.equal(leases.find((l) => l.branch === 'f-one')?.live, true);
    // Every CLI run is a new process, so a new holder: the live lease belongs to someone else.
    assertCleanError(ts.run(['lease', 'acquire', 'app@f-one'], { expectCode: 'any' }), 6, /leased by/);
    assertCleanError(ts.run(['destroy', 'app@f-one', '--force'], { expectCode: 'any' }), 6, /leased by/);
    assert.equal(statusMap(ts).get('app@f-one')?.state, 'active');
    assert.equal(ts.run(['lease', 'release', 'app@f-one']).stdout, '');
    assert.equal(ts.run(['lease', 'list']).stdout, '');
    assertCleanError(ts.run(['lease', 'release', 'app@f-one'], { expectCode: 'any' }), 3, /no lease on app@f-one/);
    assertCleanError(ts.run(['lease', 'acquire', 'app@ghost'], { expectCode: 'any' }), 3);
    assertCleanError(ts.run(['lease', 'frob'], { expectCode: 'any' }), 2);
  });

  test('a leased checkout refuses an at-rest checkpoint (6)', () => {
    const db = ts.run(['checkout', 'app@f-one']).stdout.trim();
    sql(db, "INSERT INTO t VALUES (7, 'seven');");
    ts.run(['lease', 'acquire', 'app@f-one', '--ttl', '1m']);
    assertCleanError(ts.run(['checkpoint', 'app@f-one', 'x'], { expectCode: 'any' }), 6, /leased by/);
    ts.run(['lease', 'release', 'app@f-one']);
    ts.run(['checkpoint', 'app@f-one', 'x']);
  });
});

describe('export', () => {
  test('refuses an existing file without --force (4); with --force overwrites it', () => {
    const out = ts.path('out', 'nested', 'app.db');
    assert.equal(ts.run(['export', 'app@main@one', out]).stdout, `${out}\n`);
    assert.equal(dump(out), oneDump);
    assertCleanError(ts.run(['export', 'app', out], { expectCode: 'any' }), 4, /already exists/);
    assert.equal(dump(out), oneDump, 'the refused export left the file alone');
    writeFileSync(ts.path('plain.txt'), 'not a database');
    assertCleanError(ts.run(['export', 'app', ts.path('plain.txt')], { expectCode: 'any' }), 4);
    assert.equal(readFileSync(ts.path('plain.txt'), 'utf8'), 'not a database');
    const doc = ts.json<{ path: string; txid: number }>(['export', 'app', out, '--force']);
    assert.deepEqual(doc, { path: out, txid: 3 });
    assert.equal(dump(out), dump(mainDb));
    assertCleanError(ts.run(['export', 'app@main@nope', ts.path('x.db')], { expectCode: 'any' }), 3);
  });
});

describe('--json on every verb', () => {
  test('each verb prints one parseable document with snake_case keys', () => {
    const docs: Array<[string[], (d: Record<string, unknown>) => void]> = [
      [['create', 'jsondb'], (d) => assert.equal(d.txid, 1)],
      [['checkout', 'jsondb'], (d) => assert.equal(d.reused, false)],
      [['path', 'jsondb'], (d) => assert.equal(typeof d.path, 'string')],
      [['checkpoint', 'jsondb', 'j1'], (d) => assert.equal(d.kind, 'none')],
      [['fork', 'jsondb', 'jf', '--ttl', '1h'], (d) => assert.equal(d.ttl, '1h0m0s')],
      [['touch', 'jsondb@jf'], (d) => assert.equal(typeof d.touched_at, 'string')],
      [['protect', 'jsondb@jf'], (d) => assert.equal(d.protected, true)],
      [['unprotect', 'jsondb@jf'], (d) => assert.equal(d.changed, true)],
      [['lease', 'acquire', 'jsondb@jf'], (d) => assert.equal(d.renewed, false)],
      [['lease', 'list'], (d) => assert.ok(Array.isArray(d.leases))],
      [['lease', 'release', 'jsondb@jf'], (d) => assert.equal(d.released, true)],
      [['checkout', 'jsondb', '--at', 'j1', '--read-only'], (d) => assert.equal(d.cached, false)],
      [['export', 'jsondb@jf', ts.path('json-export.db')], (d) => assert.equal(d.txid, 1)],
      [['diff', 'jsondb', 'jsondb@jf'], (d) => assert.ok(Array.isArray(d.tables))],
      [['promote', 'jsondb@jf', '--onto', 'main', '--force'], (d) => assert.equal(d.backup, 'main-pre-promote')],
      [['rollback', 'jsondb', '--to', 'promote'], (d) => assert.equal(d.refreshed, true)],
      [['compact', 'jsondb'], (d) => assert.equal(d.compacted, true)],
      [['status', 'jsondb'], (d) => assert.ok(Array.isArray(d.branches))],
      [['destroy', 'jsondb@jf'], (d) => assert.equal(d.removed_checkout, false)],
      [['gc'], (d) => assert.equal(typeof d.tombstoned, 'number')],
      [['version'], (d) => assert.equal(typeof d.version, 'string')],
    ];
    for (const [args, check] of docs) {
      const r = ts.run([...args, '--json']);
      let doc: Record<string, unknown>;
      try {
        doc = JSON.parse(r.stdout) as Record<string, unknown>;
      } catch {
        assert.fail(`offshoot ${args.join(' ')} --json printed no JSON document: ${r.stdout}`);
      }
      for (const k of Object.keys(doc)) assert.doesNotMatch(k, /[A-Z]/, `${args[0]}: key ${k} is snake_case`);
      check(doc);
    }
  });

  test('--json errors are one JSON line on stderr with the code', () => {
    const r = ts.run(['checkout', 'app@nope', '--json'], { expectCode: 3 });
    assert.equal(r.stdout, '');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1);
    const err = (JSON.parse(lines[0] ?? '') as { error: { code: string; hint: string } }).error;
    assert.equal(err.code, 'NOT_FOUND');
    assert.ok(err.hint.length > 0);
  });
});

describe('a busy checkout', () => {
  test('checkpoint and checkout fail cleanly with 6 while a writer holds a transaction, and store nothing', async () => {
    ts.run(['fork', 'app', 'busy']);
    const db = ts.run(['checkout', 'app@busy']).stdout.trim();
    // One committed write (the checkout is dirty), then a write transaction left open.
    const writer = await holdSqlite3(
      db,
      "INSERT INTO t VALUES (10, 'committed'); BEGIN IMMEDIATE; INSERT INTO t VALUES (11, 'uncommitted');",
    );
    const before = dataFiles();
    const head = statusMap(ts).get('app@busy');
    try {
      const started = Date.now();
      const cp = ts.run(['checkpoint', 'app@busy', 'held'], { expectCode: 'any' });
      assertCleanError(cp, 6, /busy/);
      assert.ok(Date.now() - started >= 2500, 'it waited out the busy timeout first');
      assert.deepEqual(dataFiles(), before, 'nothing new in data/');
      assert.deepEqual(
        filesUnder(join(ts.store, 'data'), (n) => n.startsWith('.tmp-')),
        [],
      );
      const co = ts.run(['checkout', 'app@busy'], { expectCode: 'any' });
      assertCleanError(co, 6, /busy/);
      assert.deepEqual(dataFiles(), before);
      assert.deepEqual(statusMap(ts).get('app@busy')?.txid, head?.txid);
    } finally {
      await writer.close();
    }
    // The writer is gone: its committed row is checkpointed, the uncommitted one never existed.
    assert.equal(
      ts.run(['checkpoint', 'app@busy', 'held']).stdout,
      `checkpoint "held" at txid ${(head?.txid ?? 0) + 1}\n`,
    );
    const out = ts.path('busy-held.db');
    ts.run(['export', 'app@busy@held', out]);
    assert.equal(sql(out, 'SELECT id FROM t WHERE id >= 10;').trim(), '10');
  });
});
