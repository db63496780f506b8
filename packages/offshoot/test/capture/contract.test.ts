// The connection contract (a checkout stays in WAL mode), as the capture engine enforces it: a checkout found out of
// WAL mode is refused with the typed error rather than silently switched back, and while capture holds the checkout
// open no other connection can take it out of WAL mode at all.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { dbFileFd } from '../../src/capture/db-file-cache.js';
import { ContractBreachError } from '../../src/capture/journal-contract.js';
import { cli, converge, fixture } from './capture-fixture.js';

const HOUR = 3_600_000;

// Through the shared descriptor: closing one of our own on the checkout would drop the engine's locks on it.
function formatVersions(db: string): [number, number] {
  const buf = Buffer.alloc(2);
  fs.readSync(dbFileFd(db), buf, 0, 2, 18);
  return [buf[0] ?? 0, buf[1] ?? 0];
}

test('a checkout taken out of WAL mode is refused with the typed error, and left as it was', async () => {
  const f = fixture();
  try {
    f.writer.close();
    await cli(f.db, "PRAGMA journal_mode = DELETE;\nINSERT INTO t(body) VALUES (x'01');\n");
    assert.deepEqual(formatVersions(f.db), [1, 1]);
    const engine = f.engine({ pollMs: HOUR });
    await assert.rejects(engine.start(), (err: unknown) => {
      assert.ok(err instanceof ContractBreachError, String(err));
      assert.equal(err.code, 'UNSUPPORTED');
      assert.equal(err.breach.kind, 'journal_mode');
      assert.match(err.hint ?? '', /journal_mode/);
      return true;
    });
    assert.deepEqual(formatVersions(f.db), [1, 1], 'not switched back behind the writer');
  } finally {
    await f.cleanup();
  }
});

test('a rollback journal beside the checkout is refused too', async () => {
  const f = fixture();
  try {
    f.writer.close();
    fs.writeFileSync(`${f.db}-journal`, '');
    const engine = f.engine({ pollMs: HOUR });
    await assert.rejects(engine.start(), (err: unknown) => {
      assert.ok(err instanceof ContractBreachError);
      assert.equal(err.breach.kind, 'rollback_journal');
      return true;
    });
  } finally {
    await f.cleanup();
  }
});

test('while capture runs, another connection cannot leave WAL mode: SQLite refuses it busy, capture goes on', async () => {
  const f = fixture();
  try {
    f.writer.close();
    const engine = f.engine({ pollMs: 5 });
    await engine.start();
    const r = spawnSync('sqlite3', [f.db, 'PRAGMA journal_mode = DELETE;'], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, `the switch was allowed: ${r.stdout}`);
    assert.match(r.stderr, /locked/);
    assert.deepEqual(formatVersions(f.db), [2, 2]);
    await cli(f.db, "INSERT INTO t(body) VALUES (x'02');\n");
    await converge(engine, f);
    assert.equal(engine.failure, undefined);
  } finally {
    await f.cleanup();
  }
});

test('commits left in the -wal while capture was down are captured from it on a resume, without a rebase', async () => {
  const f = fixture();
  try {
    const first = f.engine({ pollMs: HOUR });
    await first.start();
    f.insert(3);
    await converge(first, f);
    assert.deepEqual(await first.stop(), { clean: true });
    // The writer keeps its connection: its commits stay in the -wal, the main file is untouched.
    f.insert(4);
    assert.ok(fs.statSync(`${f.db}-wal`).size > 0);
    const rebases = f.sink.rebases;
    const next = f.engine({ pollMs: HOUR });
    assert.deepEqual(await next.start(), { resumed: true });
    assert.equal(next.rebases, 0);
    await converge(next, f);
    assert.equal(f.sink.rebases, rebases, 'the commits came from the -wal, not from a copy');
  } finally {
    await f.cleanup();
  }
});
