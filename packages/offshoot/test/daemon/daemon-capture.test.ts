import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dump, runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, sleep, startDaemon, until, type DaemonProcess, type StoreDir } from './daemon-process.js';

function dataObjects(store: string): string[] {
  return readdirSync(path.join(store, 'data'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ltx'));
}

describe('live capture through the daemon and the session CLI', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  const session = (args: string[]) => s.cli(['session', ...args, '-socket', d.sock]);

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    assert.equal(s.cli(['create', 'logs']).code, 0);
    d = await startDaemon(s, ['-flush-every', '300ms', '-reap-every', '0']);
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('sqlite3 writes into the checkout, session flush makes them durable, export matches the checkout', () => {
    const open = session(['open', 'app']);
    assert.equal(open.code, 0, open.stderr);
    const checkout = open.stdout.trim();
    assert.equal(checkout, path.join(s.store, 'checkouts', 'app', 'main.db'));
    runSql(
      checkout,
      "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('a'), ('b'), (randomblob(300));",
    );
    const f = session(['flush', 'app', 'first', '--meta', 'by=test']);
    assert.equal(f.code, 0, f.stderr);
    const txid = Number(/^durable through txid (\d+)$/.exec(f.stdout.trim())?.[1]);
    assert.ok(txid > 1, f.stdout);
    runSql(checkout, "UPDATE notes SET body = 'changed' WHERE id = 1; DELETE FROM notes WHERE id = 2;");
    const g = session(['flush', 'app']);
    assert.equal(g.stdout.trim(), `durable through txid ${txid + 1}`);
    const out = s.file('head.db');
    const ex = s.cli(['export', 'app', out]);
    assert.equal(ex.code, 0, ex.stderr);
    assert.equal(dump(out), dump(checkout));
    const dup = session(['flush', 'app', 'first']);
    assert.equal(dup.code, 4, 'a checkpoint name is used once');
    assert.match(dup.stderr, /^offshoot: daemon: checkpoint "first" already exists on app@main/);
    const metaNoName = session(['flush', 'app', '--meta', 'k=v']);
    assert.equal(metaNoName.code, 2);
  });

  test('session status, dbs and branches print one line per item', () => {
    const st = session(['status']);
    assert.equal(st.code, 0, st.stderr);
    const line = st.stdout.trim();
    assert.match(
      line,
      /^app@main durable=\d+ epoch=\d+ holder=\S+\/\d+\/[0-9a-f]{16} checkout=\S+main\.db lag=\d+ last_flush=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ age=\d+s unflushed=\d+$/,
    );
    assert.equal(session(['dbs']).stdout, 'app\nlogs\n');
    const br = session(['branches', 'app']);
    assert.match(
      br.stdout,
      /^app@main state=active storage=materialized txid=\d+ checkpoints=\[init,first\] protected holder=\S+$/m,
    );
    const json = JSON.parse(s.cli(['session', 'status', '-socket', d.sock, '--json']).stdout) as {
      sessions: Array<{ db: string }>;
    };
    assert.deepEqual(
      json.sessions.map((x) => x.db),
      ['app'],
    );
  });

  test('at-rest verbs refuse a branch with a live session and name the way out', () => {
    for (const args of [
      ['rollback', 'app', '--to', 'init'],
      ['checkpoint', 'app', 'at-rest'],
      ['compact', 'app'],
    ]) {
      const r = s.cli(args);
      assert.equal(r.code, 6, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /offshoot session close app@main/, args.join(' '));
    }
  });

  test('the background flush makes writes durable on its own, and idle ticks write nothing', async () => {
    const checkout = path.join(s.store, 'checkouts', 'app', 'main.db');
    const durable = async (): Promise<number> => (await d.request({ op: 'status' })).sessions?.[0]?.durable_txid ?? -1;
    const before = await durable();
    runSql(checkout, "INSERT INTO notes(body) VALUES ('background');");
    await until(async () => (await durable()) > before, 'a background flush');
    await until(
      async () => (await d.request({ op: 'status' })).sessions?.[0]?.capture_lag_bytes === 0,
      'the lag to drain',
    );
    const settled = await durable();
    const objects = dataObjects(s.store).length;
    await sleep(1200);
    assert.equal(await durable(), settled, 'idle ticks advance nothing');
    assert.equal(dataObjects(s.store).length, objects, 'idle ticks upload nothing');
    assert.match(d.stderr(), /offshoot: session: app@main: flushed kind=auto txid=\d+ duration_seconds=/);
  });

  test('close flushes pending writes and releases the lease', async () => {
    const checkout = path.join(s.store, 'checkouts', 'app', 'main.db');
    // A long flush interval would leave this write pending; the close must carry it.
    runSql(checkout, "INSERT INTO notes(body) VALUES ('written just before close');");
    const c = session(['close', 'app']);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout, '');
    assert.equal(session(['status']).stdout, '');
    const out = s.file('closed.db');
    assert.equal(s.cli(['export', 'app', out]).code, 0);
    assert.match(dump(out), /written just before close/);
    assert.equal(dump(out), dump(checkout));
    assert.equal(s.cli(['lease', 'list']).stdout, '', 'the lease is gone');
    const again = session(['close', 'app']);
    assert.equal(again.code, 3);
    assert.match(again.stderr, /no session open on app@main/);
  });

  test('a session reopened on a clean checkout resumes it and keeps capturing', async () => {
    const open = session(['open', 'app']);
    assert.equal(open.code, 0, open.stderr);
    runSql(open.stdout.trim(), "INSERT INTO notes(body) VALUES ('second session');");
    assert.equal(session(['close', 'app']).code, 0);
    const out = s.file('reopened.db');
    assert.equal(s.cli(['export', 'app', out]).code, 0);
    assert.match(dump(out), /second session/);
  });
});
