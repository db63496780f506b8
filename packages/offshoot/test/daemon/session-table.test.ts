import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import { daemonState } from '../../src/daemon/branch-info.js';
import { sessionLogLine } from '../../src/daemon/log-line.js';
import { SessionTable } from '../../src/daemon/session-table.js';
import type { Session } from '../../src/session/session.js';

const t = { db: 'app', branch: 'main' };

function fakeSession(error?: Error): Session {
  return { error } as unknown as Session;
}

test('a reserved (pending) slot blocks a second open and every repointing op, and reports pending', async () => {
  const counts: number[] = [];
  const table = new SessionTable((n) => counts.push(n));
  table.reserve(t);
  assert.throws(
    () => table.reserve(t),
    (e) => hasCode(e, 'SESSION_OPEN') && /already being opened/.test(e.message),
  );
  assert.throws(
    () => table.refuseIfPresent(t, 'rollback'),
    (e) => hasCode(e, 'SESSION_OPEN') && /session is being opened on it; close the session first/.test(e.message),
  );
  assert.throws(
    () => table.open(t),
    (e) => hasCode(e, 'BUSY') && /still being opened/.test(e.message),
  );
  assert.equal(daemonState('idle', table.get(t)), 'pending');
  assert.deepEqual(table.live(), [], 'reserved slots are not listed');

  let drained = false;
  const pending = table.whenNoPending().then(() => (drained = true));
  await Promise.resolve();
  assert.equal(drained, false);
  table.fill(t, fakeSession());
  await pending;
  assert.equal(table.live().length, 1);
  assert.deepEqual(counts, [1]);
  assert.equal(daemonState('active', table.get(t)), 'active');
  assert.throws(
    () => table.refuseIfPresent(t, 'destroy'),
    /it has a session open in this daemon; close the session first/,
  );
  table.refuseIfPresent({ db: 'app', branch: 'other' }, 'destroy');
});

test('a session with a terminal error reports error above every other state; a stopping table refuses opens', () => {
  const table = new SessionTable();
  table.reserve(t);
  table.fill(t, fakeSession(new Error('fenced')));
  assert.equal(daemonState('active', table.get(t)), 'error');
  const closing = table.beginClose(t);
  assert.equal(closing.state, 'closing');
  assert.throws(
    () => table.open(t),
    (e) => hasCode(e, 'BUSY') && /closing/.test(e.message),
  );
  table.remove(t);
  assert.throws(
    () => table.open(t),
    (e) => hasCode(e, 'NOT_FOUND') && /no session open on app@main/.test(e.message),
  );
  table.stopOpening();
  assert.throws(
    () => table.reserve(t),
    (e) => hasCode(e, 'UNAVAILABLE') && /shutting down/.test(e.message),
  );
});

test('session log lines quote only values that need it', () => {
  assert.equal(
    sessionLogLine('app', 'main', 'flushed', { kind: 'auto', txid: 7, duration_seconds: 0.25 }),
    'offshoot: session: app@main: flushed kind=auto txid=7 duration_seconds=0.25',
  );
  assert.equal(
    sessionLogLine('app', 'b', 'flush_failed', { error: 'store down: 503', kind: 'auto' }),
    'offshoot: session: app@b: flush_failed error="store down: 503" kind=auto',
  );
  assert.equal(sessionLogLine('app', 'main', 'session_closed'), 'offshoot: session: app@main: session_closed');
});
