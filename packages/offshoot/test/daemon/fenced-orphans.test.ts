import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { test } from 'node:test';
import { create } from '../../src/ops/create.js';
import { collectGarbage } from '../../src/ops/gc.js';
import { acquireLease } from '../../src/ops/lease.js';
import { Session } from '../../src/session/session.js';
import type { Backend, Body, GetResult, ObjectInfo, PutCondition } from '../../src/store/backend.js';
import { openTestStore, rejectsCode } from '../ops/harness.js';
import { runSql } from '../ops/sqlite-cli.js';

/** Passes every call through, except that a put of a matching key waits until released. */
class GatedBackend implements Backend {
  private gate: { match: (key: string) => boolean; held: (key: string) => void; open: Promise<void> } | undefined;

  constructor(private readonly inner: Backend) {}

  get name(): string {
    return this.inner.name;
  }

  get capabilities(): Backend['capabilities'] {
    return this.inner.capabilities;
  }

  /** Holds the next put whose key matches; resolves with that key once it is held, plus the release. */
  hold(match: (key: string) => boolean): { held: Promise<string>; release: () => void } {
    let release = (): void => undefined;
    const open = new Promise<void>((r) => (release = r));
    let held = (_key: string): void => undefined;
    const heldP = new Promise<string>((r) => (held = r));
    this.gate = { match, held, open };
    return { held: heldP, release };
  }

  async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    const g = this.gate;
    if (g?.match(key)) {
      this.gate = undefined;
      g.held(key);
      await g.open;
    }
    return this.inner.put(key, body, cond);
  }

  get(key: string): Promise<GetResult> {
    return this.inner.get(key);
  }
  getStream(key: string): Promise<Readable> {
    return this.inner.getStream(key);
  }
  getToFile(key: string, path: string): Promise<number> {
    return this.inner.getToFile(key, path);
  }
  stat(key: string): Promise<ObjectInfo | undefined> {
    return this.inner.stat(key);
  }
  delete(key: string, opts?: { ifMatch?: string }): Promise<void> {
    return this.inner.delete(key, opts);
  }
  listKeys(prefix: string): Promise<string[]> {
    return this.inner.listKeys(prefix);
  }
  getMany(keys: readonly string[]): Promise<Array<GetResult | undefined>> {
    return this.inner.getMany(keys);
  }
  deleteMany(keys: readonly string[]): Promise<void> {
    return this.inner.deleteMany(keys);
  }
  list(prefix: string): Promise<ObjectInfo[]> {
    return this.inner.list(prefix);
  }
  copy(src: string, dst: string, cond?: { ifNoneMatch: true }): Promise<void> {
    return this.inner.copy(src, dst, cond);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

test('a flush fenced between its upload and its ref update leaves an orphan that gc collects', async () => {
  let gated: GatedBackend | undefined;
  const ts = await openTestStore({ wrap: (b) => (gated = new GatedBackend(b)) });
  try {
    assert.ok(gated);
    await create(ts.ctx, 'app');
    const t = { db: 'app', branch: 'main' };
    const live = ts.context({ now: () => new Date(), holder: 'daemon-host/1' });
    const session = await Session.open(live, t, { renewEveryMs: 3_600_000 });
    try {
      await session.flush({ kind: 'manual' });
      runSql(session.path, 'CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3);');
      const epoch = session.epoch;
      const gate = gated.hold((key) => key.startsWith('data/'));
      const flushing = session.flush({ kind: 'manual' });
      const orphan = await gate.held;
      assert.match(orphan, new RegExp(`^data/[0-9a-f]{32}/${epoch}/`));

      // Another writer takes the branch while the upload is in flight (from its clock, the lease has lapsed).
      const outsider = ts.context({ now: () => new Date(Date.now() + 3_600_000), holder: 'elsewhere/2' });
      const taken = await acquireLease(outsider, t);
      assert.equal(taken.epoch, epoch + 1);
      gate.release();

      await rejectsCode(flushing, 'FENCED');
      assert.equal(session.error?.code, 'FENCED');
      await rejectsCode(session.flush({ kind: 'manual' }), 'FENCED');
      assert.ok(await gated.stat(orphan), 'the stale upload landed under the dead epoch');
      const head = (await ts.store.getRef('app', 'main')).ref;
      assert.equal(head.head_txid, session.durableTxid, 'no ref points at it');

      const first = await collectGarbage(ts.ctx, 0n);
      assert.ok(first.tombstoned >= 1);
      const second = await collectGarbage(ts.ctx, 0n);
      assert.ok(second.deleted >= 1);
      assert.equal(await gated.stat(orphan), undefined, 'the orphan is gone');
    } finally {
      await session.abandon();
    }
  } finally {
    await ts.cleanup();
  }
});
