// A session opened on a checkout another tool left in rollback-journal mode (journal_mode set on it at rest, a
// rollback journal beside it): nothing was capturing it, so the open never says it "left WAL mode while under live
// capture". A checkout holding only the durable head is put back in WAL mode (re-materialized); one holding writes
// no checkpoint recorded keeps them as an undo branch; the open says which, and the session then captures as usual.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { dump, runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

/** The file format's write and read versions (header bytes 18 and 19): 2 and 2 in WAL mode. */
function formatVersions(db: string): [number, number] {
  const b = readFileSync(db);
  return [b[18] ?? 0, b[19] ?? 0];
}

describe('opening a session on a checkout left in rollback-journal mode', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    const main = s.cli(['checkout', 'app']).stdout.trim();
    runSql(main, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('seed');");
    assert.equal(s.cli(['checkpoint', 'app', 'seeded']).code, 0);
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  /** Forks `name`, checks it out at rest and runs `sql` on it with the stock sqlite3. */
  function leftByAnotherTool(name: string, sql: string): string {
    assert.equal(s.cli(['fork', 'app', name]).code, 0);
    const path = s.cli(['checkout', `app@${name}`]).stdout.trim();
    runSql(path, sql);
    assert.deepEqual(formatVersions(path), [1, 1], 'the other tool left it in rollback-journal mode');
    return path;
  }

  /** The session works after the open: a write is captured and flushed, then the session closes. */
  async function captures(name: string, path: string): Promise<void> {
    runSql(path, `INSERT INTO t VALUES ('after-${name}');`);
    const flushed = await d.request({ op: 'flush', db: 'app', branch: name });
    assert.equal(flushed.ok, true, JSON.stringify(flushed));
    assert.equal((await d.request({ op: 'close', db: 'app', branch: name })).ok, true);
    const out = s.file(`${name}.db`);
    assert.equal(s.cli(['export', `app@${name}`, out]).code, 0);
    assert.match(dump(out), new RegExp(`'after-${name}'`));
  }

  function branches(): string[] {
    return s
      .cli(['status', 'app'])
      .stdout.split('\n')
      .map((l) => /^app@(\S+)/.exec(l)?.[1] ?? '')
      .filter((b) => b !== '');
  }

  for (const mode of ['DELETE', 'TRUNCATE', 'PERSIST']) {
    test(`a clean checkout in ${mode} mode is put back in WAL mode, with no undo branch`, async () => {
      const name = `clean-${mode.toLowerCase()}`;
      const path = leftByAnotherTool(name, `PRAGMA journal_mode = ${mode};`);
      const open = await d.request({ op: 'open', db: 'app', branch: name });
      assert.equal(open.ok, true, JSON.stringify(open));
      assert.equal(open.checkout, path);
      assert.equal(open.warnings?.length, 1, JSON.stringify(open));
      const said = open.warnings?.[0] ?? '';
      assert.doesNotMatch(said, /under live capture/);
      assert.match(said, /rollback-journal mode/);
      assert.match(said, /WAL mode/);
      assert.match(said, /nothing beyond the durable head/);
      assert.ok(!branches().some((b) => b.startsWith(`${name}-pre-reopen`)), 'nothing was kept: nothing differed');
      assert.deepEqual(formatVersions(path), [2, 2]);
      assert.equal(existsSync(`${path}-journal`), false, 'no rollback journal beside it');
      await captures(name, path);
    });
  }

  test('a dirty checkout keeps its writes as an undo branch, says so, and the session starts from the head', async () => {
    const name = 'dirty';
    const path = leftByAnotherTool(name, "PRAGMA journal_mode = PERSIST; INSERT INTO t VALUES ('behind our back');");
    assert.equal(existsSync(`${path}-journal`), true);
    const open = await d.request({ op: 'open', db: 'app', branch: name });
    assert.equal(open.ok, true, JSON.stringify(open));
    assert.equal(open.warnings?.length, 1, JSON.stringify(open));
    const said = open.warnings?.[0] ?? '';
    assert.doesNotMatch(said, /under live capture/);
    assert.match(said, /rollback-journal/);
    assert.match(said, /app@dirty-pre-reopen/);
    assert.match(said, /offshoot promote app@dirty-pre-reopen --onto dirty/);
    const kept = s.file('kept.db');
    assert.equal(s.cli(['export', 'app@dirty-pre-reopen', kept]).code, 0);
    assert.match(dump(kept), /'behind our back'/, 'the undo branch holds the writes');
    assert.doesNotMatch(dump(path), /behind our back/, 'the session starts from the durable head');
    assert.deepEqual(formatVersions(path), [2, 2]);
    assert.equal(existsSync(`${path}-journal`), false);
    await captures(name, path);
  });
});
