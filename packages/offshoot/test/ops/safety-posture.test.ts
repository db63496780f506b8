// Data loss and the agent getting past the posture: each case here lost data or let an agent through before it was
// fixed. A refusal is proven to change nothing (every key of the store, byte for byte).
import assert from 'node:assert/strict';
import { mkdirSync, truncateSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { isCutUndoPointStem, undoPointName } from '../../src/ops/helpers/branch/undo-point-names.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import type { Actor } from '../../src/ops/helpers/safety/policy.js';
import { promote } from '../../src/ops/promote.js';
import { setProtected } from '../../src/ops/protect.js';
import { rollback } from '../../src/ops/rollback.js';
import { status } from '../../src/ops/status.js';
import { touch } from '../../src/ops/touch.js';
import { FaultBackend } from '../store/fault-backend.js';
import { exportDump, openTestStore, rejectsCode, storeSnapshot, type TestStore } from './harness.js';
import { query, runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };
const AGENT: Actor = { kind: 'agent', allowForce: false };

/** app@main (protected) with table t and checkpoints `init` and `two`, checked out; returns the checkout path. */
async function seeded(ts: TestStore): Promise<string> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('one');");
  await checkpoint(ts.ctx, MAIN, 'one');
  runSql(co.path, "INSERT INTO t(v) VALUES ('two');");
  await checkpoint(ts.ctx, MAIN, 'two');
  return co.path;
}

/** Runs a call that must be refused with code, proving the store did not change. */
async function refusedUnchanged(
  ts: TestStore,
  p: () => Promise<unknown>,
  code: 'PROTECTED' | 'INVALID_NAME' | 'CORRUPT',
) {
  const before = await storeSnapshot(ts.store);
  const err = await rejectsCode(p(), code);
  assert.deepEqual(await storeSnapshot(ts.store), before, `refused (${err.message}) and changed nothing`);
  return err;
}

function rows(file: string): string {
  return query(file, 'SELECT group_concat(v) FROM t;').trim();
}

describe('a second checkout of a dirty, current checkout', () => {
  it('returns its path, keeps the writes and says it holds uncheckpointed changes', async () => {
    const ts = await openTestStore();
    try {
      const file = await seeded(ts);
      runSql(file, "INSERT INTO t(v) VALUES ('unsaved');");
      const again = await checkout(ts.ctx, MAIN);
      assert.equal(again.path, file);
      assert.equal(again.dirty, true);
      assert.equal(rows(file), 'one,two,unsaved', 'the uncheckpointed write is still there');
      const third = await checkout(ts.ctx, MAIN);
      assert.equal(third.dirty, true);
      assert.equal(rows(file), 'one,two,unsaved');
      await checkpoint(ts.ctx, MAIN, 'three');
      assert.equal((await checkout(ts.ctx, MAIN)).dirty, false);
    } finally {
      await ts.cleanup();
    }
  });

  it('re-materializes the head over local changes only with discard', async () => {
    const ts = await openTestStore();
    try {
      const file = await seeded(ts);
      runSql(file, "INSERT INTO t(v) VALUES ('unsaved');");
      const r = await checkout(ts.ctx, MAIN, { discard: true });
      assert.equal(r.dirty, false);
      assert.equal(rows(file), 'one,two');
    } finally {
      await ts.cleanup();
    }
  });

  it('never discards from an agent: discard is refused and the writes stay', async () => {
    const ts = await openTestStore();
    try {
      const file = await seeded(ts);
      runSql(file, "INSERT INTO t(v) VALUES ('unsaved');");
      await refusedUnchanged(ts, () => checkout(ts.ctx, MAIN, { discard: true, actor: AGENT }), 'PROTECTED');
      assert.equal(rows(file), 'one,two,unsaved');
    } finally {
      await ts.cleanup();
    }
  });

  it('whose branch moved under it keeps the local changes as an undo point, then holds the new head', async () => {
    const ts = await openTestStore();
    try {
      const file = await seeded(ts);
      runSql(file, "INSERT INTO t(v) VALUES ('mine');");
      // Another machine (its own checkout root) moves main.
      const elsewhere = path.join(ts.dir, 'other-machine');
      mkdirSync(elsewhere);
      const other = makeContext(ts.store, elsewhere, { now: ts.clock.now, warn: () => undefined });
      const theirs = await checkout(other, MAIN);
      runSql(theirs.path, "INSERT INTO t(v) VALUES ('theirs');");
      await checkpoint(other, MAIN, 'theirs');
      const r = await checkout(ts.ctx, MAIN);
      assert.equal(r.dirty, false);
      assert.equal(rows(file), 'one,two,theirs', 'the checkout holds the new head');
      assert.equal(r.kept, 'main-pre-reopen');
      assert.match(await exportDump(ts, { db: 'app', branch: 'main-pre-reopen' }), /'mine'/);
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a rollback over a checkout its branch had moved under', () => {
  it("keeps the checkout's uncheckpointed writes as an undo point before refreshing it", async () => {
    const ts = await openTestStore();
    try {
      const file = await seeded(ts);
      runSql(file, "INSERT INTO t(v) VALUES ('mine');");
      const elsewhere = path.join(ts.dir, 'other-machine');
      mkdirSync(elsewhere);
      const other = makeContext(ts.store, elsewhere, { now: ts.clock.now, warn: () => undefined });
      runSql((await checkout(other, MAIN)).path, "INSERT INTO t(v) VALUES ('theirs');");
      await checkpoint(other, MAIN, 'theirs');
      const r = await rollback(ts.ctx, MAIN, 'one');
      assert.equal(rows(r.path), 'one');
      assert.match(await exportDump(ts, { db: 'app', branch: 'main-pre-reopen' }), /'mine'/);
    } finally {
      await ts.cleanup();
    }
  });
});

describe('undo points of long branch names', () => {
  it('a second agent rollback of a protected 116+ character branch is refused while its undo point exists', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const long = 'l'.repeat(120);
      await fork(ts.ctx, MAIN, long);
      await setProtected(ts.ctx, { db: 'app', branch: long }, true);
      const first = await rollback(ts.ctx, { db: 'app', branch: long }, 'fork', { actor: AGENT });
      assert.ok(first.backup.length <= 128, first.backup);
      assert.match(first.backup, /-pre-rollback$/);
      await refusedUnchanged(
        ts,
        () => rollback(ts.ctx, { db: 'app', branch: long }, 'fork', { actor: AGENT }),
        'PROTECTED',
      );
    } finally {
      await ts.cleanup();
    }
  });

  it('a 128-character branch can be rolled back, twice', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const long = 'm'.repeat(128);
      await fork(ts.ctx, MAIN, long);
      const a = await rollback(ts.ctx, { db: 'app', branch: long }, 'fork');
      assert.notEqual(a.backup, long);
      const b = await rollback(ts.ctx, { db: 'app', branch: long }, 'fork');
      assert.equal(b.backup, a.backup);
    } finally {
      await ts.cleanup();
    }
  });
});

describe('checkpoint and meta names that are Object.prototype members', () => {
  for (const name of ['constructor', '__proto__']) {
    it(`a checkpoint named ${name} is recorded, listed and rolled back to`, async () => {
      const ts = await openTestStore();
      try {
        const file = await seeded(ts);
        runSql(file, "INSERT INTO t(v) VALUES ('three');");
        await checkpoint(ts.ctx, MAIN, name);
        runSql(file, "INSERT INTO t(v) VALUES ('four');");
        await checkpoint(ts.ctx, MAIN, 'four');
        const st = await status(ts.ctx, { db: 'app' });
        assert.ok(st.branches.find((b) => b.branch === 'main')?.checkpoints.includes(name));
        await rollback(ts.ctx, MAIN, name);
        assert.equal(rows(file), 'one,two,three');
      } finally {
        await ts.cleanup();
      }
    });
  }

  it('meta keys __proto__ and constructor are kept', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const meta = JSON.parse('{"__proto__":"p","constructor":"c"}') as Record<string, string>;
      await fork(ts.ctx, MAIN, 'tagged', { meta });
      const { ref } = await ts.store.getRef('app', 'tagged');
      assert.equal(
        Object.keys(ref.meta ?? {})
          .sort()
          .join(','),
        '__proto__,constructor',
      );
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a checkout whose mtime changed but not its content', () => {
  it('is no race: compact and rollback go through', async () => {
    const ts = await openTestStore();
    try {
      const file = await seeded(ts);
      utimesSync(file, new Date(), new Date());
      await compact(ts.ctx, MAIN);
      utimesSync(file, new Date(), new Date());
      const r = await rollback(ts.ctx, MAIN, 'one');
      assert.equal(rows(r.path), 'one');
    } finally {
      await ts.cleanup();
    }
  });

  it('a rollback that fails keeps the previous undo point as it was', async () => {
    let faults: FaultBackend | undefined;
    const ts = await openTestStore({ wrap: (b) => (faults = new FaultBackend(b)) });
    try {
      const file = await seeded(ts);
      await rollback(ts.ctx, MAIN, 'one');
      const before = await ts.store.getRef('app', 'main-pre-rollback');
      runSql(file, "INSERT INTO t(v) VALUES ('again');");
      await checkpoint(ts.ctx, MAIN, 'again');
      // The second of the two base pointers a rollback writes (the undo point's and the branch's) fails.
      (faults as FaultBackend).inject({ method: 'put', key: /base\.json$/, fault: { status: 503 }, skip: 1, times: 1 });
      await rejectsCode(rollback(ts.ctx, MAIN, 'one'), 'UNAVAILABLE');
      const after = (await ts.store.getRef('app', 'main-pre-rollback')).ref;
      assert.deepEqual({ ...after, generation: 0 }, { ...before.ref, generation: 0 });
      assert.equal(rows(file), 'one,again');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('the undo points of a protected branch are read-only to an agent', () => {
  it('refuses checkpoint, rollback, write-checkout and a shortening touch of main-pre-rollback', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await setProtected(ts.ctx, MAIN, true);
      await rollback(ts.ctx, MAIN, 'one', { actor: AGENT });
      const undo = { db: 'app', branch: 'main-pre-rollback' };
      await refusedUnchanged(ts, () => checkout(ts.ctx, undo, { actor: AGENT }), 'PROTECTED');
      // A human's checkout of it, then an agent's writes to that file: the agent cannot record them.
      const file = (await checkout(ts.ctx, undo)).path;
      runSql(file, "INSERT INTO t(v) VALUES ('agent-chosen');");
      await refusedUnchanged(ts, () => checkpoint(ts.ctx, undo, 'mine', undefined, { actor: AGENT }), 'PROTECTED');
      await refusedUnchanged(ts, () => rollback(ts.ctx, undo, 'fork', { actor: AGENT }), 'PROTECTED');
      await refusedUnchanged(
        ts,
        () => touch(ts.ctx, undo, { kind: 'set', ttl: 1_000_000_000n }, { actor: AGENT }),
        'PROTECTED',
      );
      // With -allow-force the agent may.
      await checkpoint(ts.ctx, undo, 'mine', undefined, { actor: { kind: 'agent', allowForce: true } });
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a TTL on a protected branch', () => {
  it('cannot be set or shortened by an agent', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await setProtected(ts.ctx, MAIN, true);
      await refusedUnchanged(
        ts,
        () => touch(ts.ctx, MAIN, { kind: 'set', ttl: 1_000_000_000n }, { actor: AGENT }),
        'PROTECTED',
      );
      await touch(ts.ctx, MAIN, { kind: 'keep' }, { actor: AGENT });
    } finally {
      await ts.cleanup();
    }
  });

  it('unprotect of a branch with a TTL says when it now expires', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await touch(ts.ctx, MAIN, { kind: 'set', ttl: 3_600_000_000_000n });
      const r = await setProtected(ts.ctx, MAIN, false);
      assert.equal(r.expiresAt, new Date(ts.clock.now().getTime() + 3_600_000).toISOString());
    } finally {
      await ts.cleanup();
    }
  });
});

describe('undo-point names are reserved for offshoot', () => {
  for (const name of ['main-pre-promote', 'main-pre-rollback', 'main-pre-merge', 'x-pre-reopen', 'x-pre-reopen-2']) {
    it(`fork refuses ${name}`, async () => {
      const ts = await openTestStore();
      try {
        await seeded(ts);
        await refusedUnchanged(ts, () => fork(ts.ctx, MAIN, name), 'INVALID_NAME');
      } finally {
        await ts.cleanup();
      }
    });
  }

  it('so is the name a long branch is cut to for its undo points, and only that', () => {
    const long = `l${'o'.repeat(127)}`;
    for (const kind of ['pre-rollback', 'pre-promote', 'pre-merge', 'pre-reopen'] as const)
      for (const n of [1, 2, 10, 10_000]) {
        const stem = undoPointName(long, kind, n).slice(0, -(kind.length + 1 + (n > 1 ? String(n).length + 1 : 0)));
        assert.ok(isCutUndoPointStem(stem), `${stem.length} characters, ${kind} ${n}`);
      }
    const tag = '_0123abcd';
    assert.equal(isCutUndoPointStem(`${'a'.repeat(100)}${tag}`), true, '109 characters');
    assert.equal(isCutUndoPointStem(`${'a'.repeat(99)}${tag}`), false, '108 characters leave room for no suffix');
    assert.equal(isCutUndoPointStem(`${'a'.repeat(109)}${tag}`), true, '118 characters: room for -pre-merge');
    assert.equal(isCutUndoPointStem(`${'a'.repeat(110)}${tag}`), false, '119 characters take no suffix whole');
    assert.equal(isCutUndoPointStem('run_0123abcd'), false, 'a short name with a hex tail is an ordinary name');
    assert.equal(isCutUndoPointStem(`${'a'.repeat(100)}_0123ABCD`), false, 'the tag is lowercase hex');
  });

  it('and an agent cannot block a human promote by taking one', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await setProtected(ts.ctx, MAIN, true);
      await fork(ts.ctx, MAIN, 'work');
      await refusedUnchanged(ts, () => fork(ts.ctx, MAIN, 'main-pre-promote'), 'INVALID_NAME');
      const p = await promote(ts.ctx, { db: 'app', branch: 'work' }, 'main', { force: true });
      assert.equal(p.backup, 'main-pre-promote');
      await destroy(ts.ctx, { db: 'app', branch: 'work' });
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a 0-byte checkout', () => {
  it('is refused as create --from refuses the same file, and the head is unchanged', async () => {
    const ts = await openTestStore();
    try {
      const file = await seeded(ts);
      truncateSync(file, 0);
      const err = await refusedUnchanged(ts, () => checkpoint(ts.ctx, MAIN, 'empty'), 'CORRUPT');
      assert.match(err.message, /empty \(0 bytes\)/);
    } finally {
      await ts.cleanup();
    }
  });
});
