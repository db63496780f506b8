// The CLI's --json has one shape for a branch, whether it comes from the store (`status`) or the daemon
// (`session branches`); `session status` tells captured-but-unflushed bytes apart from the WAL not yet captured.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { makeStoreDir, startDaemon, until, type DaemonProcess, type StoreDir } from './daemon-process.js';

type Json = Record<string, unknown>;

describe('CLI JSON shapes', { timeout: 120_000 }, () => {
  let s: StoreDir;
  let d: DaemonProcess;
  let sock: string[];

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    assert.equal(s.cli(['fork', 'app', 'kid', '--ttl', '1h']).code, 0);
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    sock = ['-socket', d.sock];
  });
  after(async () => {
    await d.stop();
    s.cleanup();
  });

  function json(args: string[]): Json {
    const r = s.cli([...args, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Json;
  }

  test('session branches --json uses the branch shape of status --json', () => {
    const atRest = (json(['status', 'app']).branches as Json[]).map((b) => [`${b.db}@${b.branch}`, b] as const);
    const viaDaemon = (json(['session', 'branches', 'app', ...sock]).branches as Json[]).map(
      (b) => [`${b.db}@${b.branch}`, b] as const,
    );
    assert.deepEqual(
      viaDaemon.map(([k]) => k),
      atRest.map(([k]) => k),
    );
    const rest = new Map(atRest);
    for (const [name, b] of viaDaemon) {
      const r = rest.get(name) as Json;
      for (const key of Object.keys(b)) assert.ok(key in r, `${name}: status --json has no "${key}"`);
      for (const key of ['state', 'storage', 'txid', 'checkpoints', 'protected', 'ttl', 'expires_at'])
        assert.deepEqual(b[key], r[key], `${name}.${key}`);
      assert.deepEqual(
        (b.checkpoints_v2 as Json[]).map((c) => [c.name, c.txid]),
        (r.checkpoints_v2 as Json[]).map((c) => [c.name, c.txid]),
      );
    }
  });

  test('diff --sql --json carries the SQL in the document', () => {
    const path = s.cli(['checkout', 'app@kid']).stdout.trim();
    spawnSync('sqlite3', [path, 'CREATE TABLE t(v); INSERT INTO t VALUES (7);']);
    assert.equal(s.cli(['checkpoint', 'app@kid', 'one']).code, 0);
    const doc = json(['diff', 'app', 'app@kid', '--sql']);
    const text = s.cli(['diff', 'app', 'app@kid', '--sql']).stdout;
    assert.equal(typeof doc.sql, 'string');
    assert.equal(`${doc.sql as string}\n`, text);
    assert.match(doc.sql as string, /INSERT INTO/);
  });

  test('session status reports unflushed bytes next to the WAL lag', async () => {
    const open = s.cli(['session', 'open', 'app', ...sock]);
    assert.equal(open.code, 0, open.stderr);
    spawnSync('sqlite3', [open.stdout.trim(), 'CREATE TABLE big(v); INSERT INTO big VALUES (randomblob(20000));']);
    let info: Json = {};
    await until(() => {
      info = (json(['session', 'status', ...sock]).sessions as Json[])[0] ?? {};
      return info.capture_lag_bytes === 0 && (info.unflushed_bytes as number) > 0;
    }, 'the commit to be captured but not flushed');
    assert.ok((info.unflushed_bytes as number) >= 20000, JSON.stringify(info));
    assert.match(s.cli(['session', 'status', ...sock]).stdout, / lag=0 .*unflushed=\d+$/m);
    assert.equal(s.cli(['session', 'flush', 'app', ...sock]).code, 0);
    const after = (json(['session', 'status', ...sock]).sessions as Json[])[0] ?? {};
    assert.equal(after.unflushed_bytes, 0);
    assert.equal(s.cli(['session', 'close', 'app', ...sock]).code, 0);
  });
});
