// What ./offshoot tells a user when it kept, refused or could not refresh something: exit codes and stderr lines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { holdWriteTransaction } from '../ops/busy-writer.js';
import { dump, ensureBuilt, sql, tempStore, type TempStore } from './cli-harness.js';

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
