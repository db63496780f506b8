// The branch verbs through a daemon (DaemonPlace) and at rest (StorePlace) answer the same reports, and check
// answers what the verb would: the same refusal, liftable by the human where it is, with nothing changed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type BranchPlace, type Client, connect, DaemonPlace, isOffshootError, StorePlace } from '../src/index.js';
import { startDaemon, type TestDaemon } from '../src/testkit.js';

const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = BIN;

/** The same walk through either place: fork, checkout, checkpoint, rollback, promote, destroy, and the checks. */
async function walk(human: BranchPlace, agent: BranchPlace): Promise<void> {
  await human.create('app');
  const fork = await agent.fork({ db: 'app', source: 'main', branch: 'a', more: ['b'], ttl: '2h', meta: { run: '1' } });
  assert.deepEqual(fork.branches, ['a', 'b']);
  assert.equal(fork.ttl, '2h0m0s');
  assert.ok(fork.expires_at !== null && Date.parse(fork.expires_at) > Date.now());
  const out = await agent.checkout('app', 'a');
  assert.deepEqual({ ...out, path: '' }, { path: '', live: false, txid: fork.txid, reused: false, dirty: false });
  execFileSync('sqlite3', ['-bail', out.path, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);']);
  assert.equal((await agent.checkout('app', 'a')).dirty, true);
  const cp = await agent.checkpoint('app', 'a', 'one', { by: 'agent' });
  assert.equal(cp.kind, 'segment');
  const rolled = await agent.rollback('app', 'a', 'fork');
  assert.deepEqual(
    { ...rolled, checkout: rolled.checkout === out.path },
    {
      checkpoint: 'fork',
      txid: fork.txid,
      backup: 'a-pre-rollback',
      abandoned: { from: cp.txid, to: cp.txid },
      refreshed: true,
      protected: false,
      checkout: true,
      warnings: [],
    },
  );
  await assert.rejects(
    agent.check({ verb: 'promote', db: 'app', source: 'b', onto: 'main', force: true }),
    (e) => isOffshootError(e, 'PROTECTED') && e.humanCanAllow,
  );
  await human.check({ verb: 'promote', db: 'app', source: 'b', onto: 'main', force: true });
  await agent.check({ verb: 'destroy', db: 'app', branch: 'b', force: false });
  await agent.check({ verb: 'rollback', db: 'app', branch: 'a', to: 'fork' });
  await assert.rejects(
    human.check({ verb: 'promote', db: 'app', source: 'b', onto: 'main', force: true, ifHead: fork.txid + 1 }),
    (e) => isOffshootError(e, 'BASE_MOVED') && /app@main moved since txid/.test(e.message),
  );
  await assert.rejects(human.promote('app', 'b', 'main', { force: true, ifHead: fork.txid + 1 }), (e) =>
    isOffshootError(e, 'BASE_MOVED'),
  );
  const promoted = await human.promote('app', 'b', 'main', { force: true, ifHead: fork.txid });
  assert.deepEqual(
    { ...promoted, checkout: '' },
    {
      txid: fork.txid,
      backup: 'main-pre-promote',
      if_head: fork.txid,
      checkout: '',
      refreshed: false,
      source_live: false,
      warnings: [],
    },
  );
  await assert.rejects(
    agent.check({ verb: 'destroy', db: 'app', branch: 'main-pre-promote', force: true }),
    (e) => isOffshootError(e, 'PROTECTED') && e.humanCanAllow && /undo point of protected/.test(e.message),
  );
  assert.deepEqual(await agent.destroy('app', 'b'), { removed_checkout: false, warnings: [] });
  execFileSync('sqlite3', ['-bail', (await agent.checkout('app', 'a')).path, 'CREATE TABLE u(x);']);
  await assert.rejects(
    agent.check({ verb: 'destroy', db: 'app', branch: 'a', force: true }),
    (e) => isOffshootError(e, 'PROTECTED') && /holds writes no checkpoint has/.test(e.message),
  );
  const gone = await human.destroy('app', 'a');
  assert.equal(gone.removed_checkout, true);
  assert.equal(gone.discarded?.reason, 'uncheckpointed_writes', 'the destroy says what it discarded');
}

describe('the branch verbs through a daemon', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let c: Client;
  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    c = await connect(daemon.sock);
  });
  after(async () => {
    c.close();
    await daemon.stop();
  });

  test('fork, checkout, checkpoint, rollback, promote, destroy and check', async () => {
    await walk(new DaemonPlace(c), new DaemonPlace(c, { actor: 'agent' }));
  });
});

describe('the branch verbs at rest', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-place-'));
  const store = join(dir, 'store');
  before(() => execFileSync(BIN, ['-store', store, 'init']));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('fork, checkout, checkpoint, rollback, promote, destroy and check', async () => {
    await walk(new StorePlace({ store }), new StorePlace({ store }, { actor: 'agent' }));
  });
});
