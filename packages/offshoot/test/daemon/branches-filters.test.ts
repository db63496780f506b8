// The wire `branches` op's additive filters: `state` matches the state the daemon reports (a session's branch is
// active), `limit` lists at most that many and says how many more matched; without them the answer is as before.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect } from '@offshoot/client';
import { assertDaemonError, makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

let s: StoreDir;
let d: DaemonProcess;

before(async () => {
  s = makeStoreDir();
  d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
  assert.equal((await d.request({ op: 'create', db: 'app' })).ok, true);
  for (const name of ['f1', 'f2', 'f3']) assert.equal((await d.request({ op: 'fork', db: 'app', name })).ok, true);
  assert.equal((await d.request({ op: 'open', db: 'app', branch: 'f2' })).ok, true);
});

after(async () => {
  await d?.stop();
  s?.cleanup();
});

const names = (r: { branches?: Array<{ branch: string }> }): string[] => (r.branches ?? []).map((b) => b.branch);

test('without filters the answer has no new field', async () => {
  const r = await d.request({ op: 'branches', db: 'app' });
  assert.deepEqual(names(r), ['f1', 'f2', 'f3', 'main']);
  assert.equal('truncated' in r, false);
  assert.equal('more' in r, false);
});

test('state keeps exactly the branches in those states, as the daemon reports them', async () => {
  const active = await d.request({ op: 'branches', db: 'app', state: ['active'] });
  assert.deepEqual(names(active), ['f2']);
  const idle = await d.request({ op: 'branches', db: 'app', state: ['idle', 'dirty'] });
  assert.deepEqual(names(idle), ['f1', 'f3', 'main']);
  assertDaemonError(
    await d.request({ op: 'branches', db: 'app', state: ['leased'] }),
    'INVALID_ARGUMENT',
    /unknown branch state/,
  );
});

test('limit lists at most that many and counts the rest; the client passes both filters', async () => {
  const r = await d.request({ op: 'branches', db: 'app', limit: 1 });
  assert.deepEqual(names(r), ['f1']);
  assert.equal(r.truncated, true);
  assert.equal(r.more, 3);
  assertDaemonError(await d.request({ op: 'branches', db: 'app', limit: 0 }), 'INVALID_ARGUMENT', /limit/);
  const c = await connect(d.sock);
  try {
    const report = await c.branchReport('app', { state: ['idle'], limit: 2 });
    assert.deepEqual(
      report.branches.map((b) => b.branch),
      ['f1', 'f3'],
    );
    assert.equal(report.truncated, true);
    assert.equal(report.more, 1);
    assert.equal((await c.branchReport('app')).truncated, undefined);
  } finally {
    await c.close();
  }
});
