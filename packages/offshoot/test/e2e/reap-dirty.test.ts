// Writes to a checkout are activity: `gc` postpones the reap of an expired branch whose checkout holds writes no
// checkpoint has, or that an application's connection holds open (the stock sqlite3 CLI, still connected), and
// status says so; an explicit destroy of such a checkout says what it discards, and an agent is refused it without
// force.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  assertCleanError,
  dump,
  ensureBuilt,
  holdSqlite3,
  sql,
  statusMap,
  tempStore,
  type TempStore,
} from './cli-harness.js';

const PROTECTED = 5;

interface Postponed {
  name: string;
  reason: string;
}

/** `gc --json` as these tests read it. */
function gc(ts: TempStore): { reaped: string[]; postponed: Postponed[] } {
  const doc = JSON.parse(ts.run(['gc', '--json']).stdout) as { reaped: string[]; postponed?: Postponed[] };
  return { reaped: doc.reaped, postponed: doc.postponed ?? [] };
}

/** Forks app@name, checks it out and returns the checkout path. */
function forkedCheckout(ts: TempStore, name: string): string {
  ts.run(['fork', 'app', name]);
  return ts.run(['checkout', `app@${name}`]).stdout.trim();
}

describe('gc and a checkout holding work', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    const main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('base');");
    ts.run(['checkpoint', 'app', 'base']);
  });
  after(() => ts.cleanup());

  test('uncheckpointed writes under an open connection postpone the reap; status says so; nothing is lost', async () => {
    const path = forkedCheckout(ts, 'work');
    const app = await holdSqlite3(path, "INSERT INTO t VALUES ('a second ago');");
    try {
      ts.run(['touch', 'app@work', '--ttl', '1ns']);
      const st = statusMap(ts).get('app@work') as unknown as Record<string, unknown>;
      assert.equal(st['remaining'], 'expired');
      assert.equal(st['reap_postponed'], 'uncheckpointed_writes');
      assert.match(
        ts.run(['status', 'app']).stdout,
        /^app@work .*remaining=expired reap-postponed=uncheckpointed_writes/m,
      );
      const r = gc(ts);
      assert.deepEqual(r.reaped, []);
      assert.deepEqual(r.postponed, [{ name: 'app@work', reason: 'uncheckpointed_writes' }]);
      assert.match(
        ts.run(['gc']).stderr,
        /gc: postponed the reap of app@work: its checkout holds writes no checkpoint has; checkpoint it/,
      );
      assert.ok(existsSync(path), 'the checkout is where the application has it');
      // The application's later write lands in the checkout the branch still has.
      await app.run("INSERT INTO t VALUES ('later');");
    } finally {
      await app.close();
    }
    ts.run(['checkpoint', 'app@work', 'kept']);
    const out = ts.path('work.db');
    ts.run(['export', 'app@work@kept', out]);
    assert.match(dump(out), /'a second ago'/);
    assert.match(dump(out), /'later'/);
    // Checkpointed is activity too; once it is due again with nothing held, it goes.
    ts.run(['touch', 'app@work', '--ttl', '1ns']);
    assert.deepEqual(gc(ts).reaped, ['app@work']);
    assert.equal(existsSync(path), false);
  });

  test('a clean checkout an application still holds open is not reaped under it', async () => {
    const path = forkedCheckout(ts, 'reader');
    const app = await holdSqlite3(path, 'SELECT count(*) FROM t;');
    try {
      ts.run(['touch', 'app@reader', '--ttl', '1ns']);
      const r = gc(ts);
      assert.equal(r.reaped.includes('app@reader'), false);
      assert.deepEqual(
        r.postponed.filter((p) => p.name === 'app@reader'),
        [{ name: 'app@reader', reason: 'open_connection' }],
      );
      await app.run("INSERT INTO t VALUES ('written after gc');");
    } finally {
      await app.close();
    }
    ts.run(['checkpoint', 'app@reader', 'after']);
    const out = ts.path('reader.db');
    ts.run(['export', 'app@reader', out]);
    assert.match(dump(out), /'written after gc'/);
  });
});

describe('destroy of a checkout holding uncheckpointed writes', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    const main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('base');");
    ts.run(['checkpoint', 'app', 'base']);
  });
  after(() => ts.cleanup());

  test('an agent is refused without force, and its force counts only under --allow-force', () => {
    const path = forkedCheckout(ts, 'agent-work');
    sql(path, "INSERT INTO t VALUES ('unsaved');");
    const refused = ts.run(['destroy', 'app@agent-work', '--actor', 'agent'], { expectCode: 'any' });
    assertCleanError(refused, PROTECTED, /app@agent-work holds writes no checkpoint has/);
    assert.match(refused.stderr, /-allow-force/);
    const forcedAlone = ts.run(['destroy', 'app@agent-work', '--actor', 'agent', '--force'], { expectCode: 'any' });
    assertCleanError(forcedAlone, PROTECTED, /-allow-force/);
    const unforced = ts.run(['destroy', 'app@agent-work', '--actor', 'agent', '--allow-force'], { expectCode: 'any' });
    assertCleanError(unforced, PROTECTED, /force: true/);
    assert.match(dump(path), /'unsaved'/, 'every refusal left the writes where they were');
    const doc = ts.json<{ removed_checkout: boolean; discarded?: Record<string, unknown> }>([
      'destroy',
      'app@agent-work',
      '--actor',
      'agent',
      '--allow-force',
      '--force',
    ]);
    assert.equal(doc.removed_checkout, true);
    assert.equal(doc.discarded?.['reason'], 'uncheckpointed_writes');
  });

  test('a human destroy goes ahead and says what it discarded', () => {
    const path = forkedCheckout(ts, 'human-work');
    sql(path, "INSERT INTO t VALUES ('unsaved');");
    const r = ts.run(['destroy', 'app@human-work']);
    assert.match(
      r.stderr,
      /discarded the writes no checkpoint had in the checkout of app@human-work \(last written \S+; changed since txid \d+[;)]/,
    );
    assert.equal(existsSync(path), false);
    const path2 = forkedCheckout(ts, 'human-json');
    sql(path2, "INSERT INTO t VALUES ('unsaved');");
    const doc = ts.json<{ discarded?: { reason: string; since_txid: number; last_write: string; wal_bytes: number } }>([
      'destroy',
      'app@human-json',
    ]);
    assert.equal(doc.discarded?.reason, 'uncheckpointed_writes');
    assert.equal(typeof doc.discarded?.since_txid, 'number');
    assert.ok(Number.isFinite(Date.parse(doc.discarded?.last_write ?? '')));
    // sqlite3 folded its -wal into the file as it closed: the writes are in the file, changed since the sidecar.
    assert.equal(doc.discarded?.wal_bytes, 0);
  });

  test('a clean checkout is destroyed with nothing to say', () => {
    forkedCheckout(ts, 'clean');
    const r = ts.run(['destroy', 'app@clean', '--actor', 'agent']);
    assert.equal(r.stderr, '');
    forkedCheckout(ts, 'clean-2');
    const doc = ts.json<Record<string, unknown>>(['destroy', 'app@clean-2']);
    assert.equal(doc['removed_checkout'], true);
    assert.equal('discarded' in doc, false);
  });
});
