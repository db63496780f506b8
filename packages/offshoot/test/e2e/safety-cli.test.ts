// What ./offshoot tells a user when it kept, refused or could not refresh something: exit codes and stderr lines.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { holdWriteTransaction } from '../ops/busy-writer.js';
import { assertCleanError, dump, ensureBuilt, filesUnder, sql, tempStore, type TempStore } from './cli-harness.js';

const BUSY = 6;

describe('rollback and promote of a busy checkout', () => {
  let ts: TempStore;
  let main: string;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('one');");
    ts.run(['checkpoint', 'app', 'one']);
    sql(main, "INSERT INTO t VALUES ('two');");
    ts.run(['checkpoint', 'app', 'two']);
    ts.run(['fork', 'app', 'exp']);
  });
  after(() => ts.cleanup());

  test('exit BUSY, say the branch moved and how to refresh, and print no stale path', async () => {
    const writer = await holdWriteTransaction(main, "INSERT INTO t VALUES ('held');");
    let rb: ReturnType<TempStore['run']>;
    let pr: ReturnType<TempStore['run']>;
    try {
      rb = ts.run(['rollback', 'app', '--to', 'one'], { expectCode: 'any' });
      pr = ts.run(['promote', 'app@exp', '--onto', 'main', '--force', '--json'], { expectCode: 'any' });
    } finally {
      await writer.kill();
    }
    assert.equal(rb.code, BUSY, rb.stderr);
    assert.equal(rb.stdout, '', 'no path of a file that still holds the old state');
    assert.match(rb.stderr, /app@main was rolled back to "one", but its checkout .* still holds the old state/);
    assert.match(rb.stderr, /offshoot checkout app@main/);
    assert.equal(pr.code, BUSY, pr.stderr);
    const doc = JSON.parse(pr.stdout) as { refreshed: boolean; refresh_error?: { code: string } };
    assert.equal(doc.refreshed, false);
    assert.equal(doc.refresh_error?.code, 'BUSY');
    assert.match(pr.stderr, /"code":"BUSY"/);
    ts.run(['checkout', 'app']);
    assert.ok(dump(main).includes("'two'"), 'after the refresh the checkout holds the promoted head');
  });
});

describe('the read-only cache budget of CLI commands', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    ts.run(['create', 'other']);
  });
  after(() => ts.cleanup());

  const chainEntries = (db: string): number =>
    filesUnder(ts.path('store', 'checkouts-ro', db, '~by-chain'), (n) => n.endsWith('.db')).length;

  test('trims checkouts-ro/ after a command, from --ro-cache-budget or $OFFSHOOT_RO_CACHE_BUDGET', () => {
    ts.run(['checkout', 'app']);
    assert.equal(chainEntries('app'), 1, 'the default budget keeps a small entry');
    ts.run(['checkout', 'other', '--ro-cache-budget', '1']);
    assert.equal(chainEntries('app') + chainEntries('other'), 0, 'a one-byte budget evicts everything');
    const ro = ts.run(['checkout', 'app@main', '--at', 'init', '--read-only'], {
      env: { OFFSHOOT_RO_CACHE_BUDGET: '1K' },
    });
    assert.equal(chainEntries('app'), 0, 'the environment variable sets the budget too');
    assert.ok(existsSync(ro.stdout.trim()), 'a read-only checkout the command printed is never trimmed');
    const doc = ts.json<{ ro_cache: { entries: number; bytes: number } }>(['status']);
    assert.equal(doc.ro_cache.entries, 1);
    assert.ok(doc.ro_cache.bytes > 0, 'status --json reports the size');
    assert.match(ts.run(['status']).stdout, /^ro-cache: 1 entries, [1-9]\d* bytes used/m, 'and so does its text');
  });
});

describe('a checkout whose file is garbage', () => {
  test('exits 7 (corrupt) naming the fix, and checkout --force re-materializes it', () => {
    ensureBuilt();
    const ts = tempStore({ init: true });
    try {
      ts.run(['create', 'app']);
      const path = ts.run(['checkout', 'app']).stdout.trim();
      writeFileSync(path, 'garbage '.repeat(1000));
      const r = ts.run(['checkout', 'app'], { expectCode: 'any' });
      assertCleanError(r, 7, /not a sound SQLite database.*offshoot checkout app@main --force/);
      const forced = ts.run(['checkout', 'app', '--force']);
      assert.equal(forced.stdout.trim(), path);
      assert.match(forced.stderr, /moved the existing checkout of app@main aside/);
      sql(path, 'CREATE TABLE again(x);');
    } finally {
      ts.cleanup();
    }
  });
});
