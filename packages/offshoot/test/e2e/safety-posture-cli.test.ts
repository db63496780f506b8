// The data-loss and posture fixes as ./offshoot shows them: a second checkout keeps uncheckpointed writes (and says
// so in --json), --discard drops them, --actor agent gets the agent rules, undo-point names are reserved, a 0-byte
// checkout is refused, and unprotect says when a branch with a TTL now expires.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, truncateSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertCleanError, dump, ensureBuilt, sql, tempStore, type TempStore } from './cli-harness.js';

const USAGE = 2;
const PROTECTED = 5;
const CORRUPT = 7;

/** Every ref file of the store with its bytes, to prove a refusal changed no branch. */
function refs(ts: TempStore): string {
  const dir = ts.path('store', 'refs', 'app');
  return readdirSync(dir)
    .filter((n) => !n.endsWith('.lock'))
    .sort()
    .map((n) => `${n}=${readFileSync(`${dir}/${n}`, 'utf8')}`)
    .join('\n');
}

describe('offshoot checkout of a checkout holding uncheckpointed writes', () => {
  let ts: TempStore;
  let main: string;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('one');");
    ts.run(['checkpoint', 'app', 'one']);
  });
  after(() => ts.cleanup());

  test('returns the same path, keeps the writes and reports dirty in --json', () => {
    sql(main, "INSERT INTO t VALUES ('unsaved');");
    const r = ts.run(['checkout', 'app', '--json']);
    const doc = JSON.parse(r.stdout) as { path: string; dirty: boolean };
    assert.equal(doc.path, main);
    assert.equal(doc.dirty, true);
    assert.match(dump(main), /'unsaved'/);
    const text = ts.run(['checkout', 'app']);
    assert.equal(text.stdout.trim(), main);
    assert.match(text.stderr, /no checkpoint has recorded yet \(kept\)/);
    assert.match(dump(main), /'unsaved'/);
  });

  test('--discard drops them and re-materializes the head', () => {
    const doc = ts.json<{ dirty: boolean }>(['checkout', 'app', '--discard']);
    assert.equal(doc.dirty, false);
    assert.doesNotMatch(dump(main), /'unsaved'/);
  });

  test('--actor agent cannot discard them', () => {
    sql(main, "INSERT INTO t VALUES ('agent-work');");
    const r = ts.run(['checkout', 'app', '--discard', '--actor', 'agent'], { expectCode: 'any' });
    assertCleanError(r, PROTECTED, /left to the human/);
    assert.match(dump(main), /'agent-work'/);
  });
});

describe('the agent rules and reserved names on the CLI', () => {
  let ts: TempStore;
  let main: string;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('one');");
    ts.run(['checkpoint', 'app', 'one']);
  });
  after(() => ts.cleanup());

  test('an undo-point name cannot be taken by fork', () => {
    for (const name of ['main-pre-promote', 'main-pre-rollback', 'main-pre-reopen-3']) {
      assertCleanError(ts.run(['fork', 'app', name], { expectCode: 'any' }), USAGE, /keeps for itself/);
    }
  });

  test('--actor agent cannot arm a TTL on protected main', () => {
    const before = refs(ts);
    const r = ts.run(['touch', 'app', '--ttl', '1s', '--actor', 'agent'], { expectCode: 'any' });
    assertCleanError(r, PROTECTED, /cannot set or shorten its TTL/);
    assert.equal(refs(ts), before);
    ts.run(['touch', 'app', '--actor', 'agent']);
  });

  test('--actor agent cannot checkpoint into the undo point of protected main', () => {
    ts.run(['checkpoint', 'app', 'two']);
    ts.run(['rollback', 'app', '--to', 'one', '--actor', 'agent']);
    const undo = ts.run(['checkout', 'app@main-pre-rollback']).stdout.trim();
    sql(undo, "INSERT INTO t VALUES ('agent-chosen');");
    const r = ts.run(['checkpoint', 'app@main-pre-rollback', 'mine', '--actor', 'agent'], { expectCode: 'any' });
    assertCleanError(r, PROTECTED, /undo point of protected app@main/);
    const second = ts.run(['rollback', 'app', '--to', 'one', '--actor', 'agent'], { expectCode: 'any' });
    assertCleanError(second, PROTECTED, /a second rollback would replace it/);
  });

  test('unprotect of a branch with a TTL says when it now expires', () => {
    ts.run(['touch', 'app', '--ttl', '2h']);
    const r = ts.run(['unprotect', 'app']);
    assert.match(r.stderr, /app@main has a TTL: unprotected, it expires at \d{4}-\d\d-\d\dT/);
    ts.run(['protect', 'app']);
  });

  test('a 0-byte checkout is refused like create --from refuses it', () => {
    truncateSync(main, 0);
    const r = ts.run(['checkpoint', 'app', 'empty'], { expectCode: 'any' });
    assertCleanError(r, CORRUPT, /empty \(0 bytes\)/);
    const from = ts.run(['create', 'copy', '--from', main], { expectCode: 'any' });
    assertCleanError(from, CORRUPT, /empty \(0 bytes\)/);
  });
});

describe('--actor agent: no route past the posture', () => {
  let ts: TempStore;
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    const main = ts.run(['checkout', 'app']).stdout.trim();
    sql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('one');");
    ts.run(['checkpoint', 'app', 'one']);
    ts.run(['rollback', 'app', '--to', 'init']);
    ts.run(['fork', 'app', 'work']);
    // The human makes a writable checkout of main's undo point; the agent writes into it.
    const undo = ts.run(['checkout', 'app@main-pre-rollback']).stdout.trim();
    sql(undo, "INSERT INTO t VALUES ('agent-chosen');");
  });
  after(() => ts.cleanup());

  test('fork, promote and compact do not checkpoint the undo point of protected main for an agent', () => {
    const before = refs(ts);
    for (const args of [
      ['fork', 'app@main-pre-rollback', 'copy'],
      ['fork', 'app@main-pre-rollback', 'copy-1', 'copy-2'],
      ['promote', 'app@main-pre-rollback', '--onto', 'work'],
      ['compact', 'app@main-pre-rollback'],
    ]) {
      const r = ts.run([...args, '--actor', 'agent'], { expectCode: 'any' });
      assertCleanError(r, PROTECTED, /undo point of protected app@main/);
      // The way to let the agent force is named in the CLI's own terms, not the MCP server's.
      assert.match(r.stderr, /--allow-force/);
      assert.doesNotMatch(r.stderr, /offshoot mcp/);
    }
    assert.equal(refs(ts), before);
  });

  test('offshoot.* meta keys are refused', () => {
    const before = refs(ts);
    const r = ts.run(['fork', 'app', 'fake', '--meta', 'offshoot.safety=pre-rollback', '--meta', 'offshoot.of=main'], {
      expectCode: 'any',
    });
    assertCleanError(r, USAGE, /offshoot\./);
    assertCleanError(
      ts.run(['checkpoint', 'app@work', 'x', '--meta', 'offshoot.of=main'], { expectCode: 'any' }),
      USAGE,
    );
    assert.equal(refs(ts), before);
  });

  test('the human may still fork the undo point, its writes and all', () => {
    ts.run(['fork', 'app@main-pre-rollback', 'kept']);
    assert.match(ts.run(['query', 'app@kept', 'SELECT v FROM t ORDER BY v']).stdout, /agent-chosen/);
  });
});
