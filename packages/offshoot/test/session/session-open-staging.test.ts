// A session on a fresh fork stages the fork's checkout while its lease is written: nothing may appear at the checkout
// path before the lease is durable, a refused lease leaves nothing staged behind, and the staged checkout a session
// opens on is clean at the head.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fail } from '../../src/core/errors.js';
import type { Ref } from '../../src/core/ref.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { checkoutPath } from '../../src/ops/helpers/context/paths.js';
import { sessionScratchParent } from '../../src/session/scratch-dir.js';
import { Session } from '../../src/session/session.js';
import { backdatedSeconds, checkClean, readSidecar, sidecarPath } from '../../src/sqlite/checkout-sidecar.js';
import { pageSumsPath } from '../../src/sqlite/page-sums.js';
import { until } from '../daemon/daemon-process.js';
import { exportDump, openTestStore, rejectsCode, type TestStore } from '../ops/harness.js';
import { dump, runSql } from '../ops/sqlite-cli.js';

describe('a session opened on a fresh fork', () => {
  let ts: TestStore;
  const live = () => ts.context({ now: () => new Date(), holder: 'daemon-host/1' });

  before(async () => {
    ts = await openTestStore();
    const src = ts.tmpPath('src.db');
    runSql(src, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('seed');");
    await create(ts.ctx, 'app', { from: src });
  });
  after(async () => ts.cleanup());

  // The private file staged beside the checkout path, once its stamp (the last step of staging) is on it.
  function stagedFile(co: string): string | undefined {
    const dir = path.dirname(co);
    if (!existsSync(dir)) return undefined;
    const tmp = readdirSync(dir).find((n) => n.startsWith(`.tmp-${path.basename(co)}-`));
    if (tmp === undefined) return undefined;
    try {
      const mtime = statSync(path.join(dir, tmp)).mtimeMs / 1000;
      return mtime <= backdatedSeconds(Date.now()) + 1 ? tmp : undefined;
    } catch {
      return undefined;
    }
  }

  function leftovers(co: string): string[] {
    const dir = path.dirname(co);
    return existsSync(dir) ? readdirSync(dir).filter((n) => n.includes(path.basename(co))) : [];
  }

  // Holds the lease's ref write of t until the fork's head is staged, then runs check before letting it through.
  function holdLeaseWrite(t: { db: string; branch: string }, check: () => void): () => void {
    return ts.store.guardRef(t.db, t.branch, {
      write: async <T>(etag: string, ref: Ref | undefined, put: (e: string, r: Ref | undefined) => Promise<T>) => {
        if (ref?.lease_holder !== undefined) {
          const co = checkoutPath(ts.ctx.checkoutRoot, t.db, t.branch);
          await until(() => stagedFile(co) !== undefined, 'the fork head to be staged');
          check();
        }
        return put(etag, ref);
      },
    });
  }

  it('places its checkout only once the lease is written, clean at the head', async () => {
    const t = { db: 'app', branch: 'staged' };
    await fork(ts.ctx, { db: 'app', branch: 'main' }, t.branch);
    const co = checkoutPath(ts.ctx.checkoutRoot, t.db, t.branch);
    let checked = false;
    const unguard = holdLeaseWrite(t, () => {
      assert.equal(existsSync(co), false, 'no checkout at the path while the lease is written');
      assert.equal(existsSync(sidecarPath(co)), false, 'no .sum while the lease is written');
      assert.equal(existsSync(pageSumsPath(co)), false, 'no .pages while the lease is written');
      checked = true;
    });
    let s: Session;
    try {
      s = await Session.open(live(), t, {});
    } finally {
      unguard();
    }
    try {
      assert.ok(checked, 'the lease write was held while the head was staged');
      assert.equal(s.path, co);
      assert.equal(await checkClean(co, readSidecar(co)), 'clean', 'the staged checkout is clean at the head');
      assert.deepEqual(
        leftovers(co).filter((n) => n.startsWith('.tmp-')),
        [],
        'the staged file was placed, not left beside it',
      );
      runSql(co, "INSERT INTO t(v) VALUES ('through the staged checkout');");
    } finally {
      await s.close();
    }
    assert.equal(dump(co), await exportDump(ts, t), 'what was written through the staged checkout is the head');
  });

  it('leaves nothing staged behind when its lease is refused', async () => {
    const t = { db: 'app', branch: 'refused' };
    await fork(ts.ctx, { db: 'app', branch: 'main' }, t.branch);
    const co = checkoutPath(ts.ctx.checkoutRoot, t.db, t.branch);
    const unguard = holdLeaseWrite(t, () => {
      throw fail('LEASE_HELD', 'taken meanwhile', { hint: 'none' });
    });
    try {
      await rejectsCode(Session.open(live(), t, {}), 'LEASE_HELD');
    } finally {
      unguard();
    }
    assert.deepEqual(leftovers(co), [], 'no checkout, sidecar or staged file is left');
    const scratch = sessionScratchParent(ts.ctx.checkoutRoot);
    assert.deepEqual(existsSync(scratch) ? readdirSync(scratch) : [], [], 'no session scratch is left');
    assert.equal((await ts.store.getRef(t.db, t.branch)).ref.lease_holder, undefined, 'no lease was taken');
  });
});
