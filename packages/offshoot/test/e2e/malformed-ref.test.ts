// One malformed ref must not take the whole store down: status names it and shows every other branch, gc keeps
// working but never deletes what that ref may reach, and `destroy --force` removes it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ensureBuilt, filesUnder, sql, tempStore, type TempStore } from './cli-harness.js';

describe('a malformed ref', { timeout: 120_000 }, () => {
  let ts: TempStore;
  let refPath: string;
  let good: string;

  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    ts.run(['create', 'other']);
    ts.run(['fork', 'app', 'x']);
    sql(ts.run(['checkout', 'app@x']).stdout.trim(), 'CREATE TABLE t(v); INSERT INTO t VALUES (42);');
    ts.run(['checkpoint', 'app@x', 'mine']);
    // An object nothing reaches, which gc may delete only when it can prove it is garbage.
    ts.run(['fork', 'other', 'doomed']);
    sql(ts.run(['checkout', 'other@doomed']).stdout.trim(), 'CREATE TABLE d(v); INSERT INTO d VALUES (1);');
    ts.run(['checkpoint', 'other@doomed', 'c']);
    ts.run(['destroy', 'other@doomed']);
    refPath = join(ts.store, 'refs', 'app', 'x');
    good = readFileSync(refPath, 'utf8');
  });
  after(() => ts.cleanup());

  test('status names the ref, lists every other branch and exits with the corrupt code', () => {
    writeFileSync(refPath, good.replace(/"head_txid":\d+/, '"head_txid":"oops"'));
    const r = ts.run(['status'], { expectCode: 7 });
    assert.match(r.stdout, /^app@main /m);
    assert.match(r.stdout, /^other@main /m);
    assert.doesNotMatch(r.stdout, /^app@x /m);
    assert.match(r.stderr, /app@x/);
    assert.match(r.stderr, /destroy app@x --force/);
    const j = JSON.parse(ts.run(['status', '--json'], { expectCode: 7 }).stdout) as {
      branches: Array<{ db: string; branch: string }>;
      unreadable: Array<{ db: string; branch: string; code: string; error: string }>;
    };
    assert.deepEqual(
      j.branches.map((b) => `${b.db}@${b.branch}`),
      ['app@main', 'other@main'],
    );
    assert.equal(j.unreadable.length, 1);
    assert.equal(j.unreadable[0]?.db, 'app');
    assert.equal(j.unreadable[0]?.branch, 'x');
    assert.equal(j.unreadable[0]?.code, 'CORRUPT');
    ts.run(['status', 'other']);
  });

  test('the daemon lists every other branch too, and session branches names the ref', async () => {
    const sock = ts.path('d.sock');
    const daemon = ts.spawn(['serve', '-socket', sock, '-flush-every', '0', '-reap-every', '0']);
    try {
      await new Promise<void>((resolve) => daemon.stdout?.on('data', () => resolve()));
      const r = ts.run(['session', 'branches', 'app', '-socket', sock], { expectCode: 7 });
      assert.match(r.stdout, /^app@main /m);
      assert.doesNotMatch(r.stdout, /^app@x /m);
      assert.match(r.stderr, /app@x/);
      const j = JSON.parse(ts.run(['session', 'branches', 'app', '-socket', sock, '--json'], { expectCode: 7 }).stdout);
      assert.deepEqual(
        (j as { unreadable: Array<{ branch: string }> }).unreadable.map((u) => u.branch),
        ['x'],
      );
    } finally {
      const exited = new Promise((resolve) => daemon.once('exit', resolve));
      daemon.kill('SIGTERM');
      await exited;
    }
  });

  test('gc keeps working but deletes nothing the malformed ref may reach', () => {
    const before = filesUnder(join(ts.store, 'data'));
    ts.run(['gc', '--grace', '0'], { expectCode: 7 });
    const r = ts.run(['gc', '--grace', '0'], { expectCode: 7 });
    assert.match(r.stderr, /app@x/);
    const afterGc = filesUnder(join(ts.store, 'data'));
    assert.ok(afterGc.length < before.length, 'the unreachable object of another database was collected');
    // The ref restored as it was: every object it reaches is still there.
    writeFileSync(refPath, good);
    const out = ts.path('x.db');
    ts.run(['export', 'app@x', out]);
    assert.equal(sql(out, 'SELECT v FROM t;').trim(), '42');
  });

  test('a ref too damaged to name its lineage makes gc delete nothing', () => {
    ts.run(['fork', 'other', 'doomed2']);
    sql(ts.run(['checkout', 'other@doomed2']).stdout.trim(), 'CREATE TABLE d(v); INSERT INTO d VALUES (2);');
    ts.run(['checkpoint', 'other@doomed2', 'c']);
    ts.run(['destroy', 'other@doomed2']);
    // Truncated mid-write: the lineage id is still in the bytes, but nothing proves what else the ref named.
    writeFileSync(refPath, good.slice(0, good.indexOf('"head_txid"')));
    const before = filesUnder(join(ts.store, 'data'));
    ts.run(['gc', '--grace', '0'], { expectCode: 7 });
    ts.run(['gc', '--grace', '0'], { expectCode: 7 });
    assert.deepEqual(filesUnder(join(ts.store, 'data')), before);
  });

  test('destroy refuses without --force, naming the fix, and removes it with --force', () => {
    const r = ts.run(['destroy', 'app@x'], { expectCode: 7 });
    assert.match(r.stderr, /app@x/);
    assert.match(r.stderr, /--force/);
    ts.run(['destroy', 'app@x', '--force']);
    const s = ts.run(['status']);
    assert.doesNotMatch(s.stdout, /app@x/);
    assert.equal(
      s.stderr.replace(/^offshoot: note: store layout .*\n/m, ''),
      '',
      'nothing on stderr but the layout note',
    );
  });
});
