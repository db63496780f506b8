// Stores written by the earlier implementation, built by hand at the byte level (manifest, refs and LTX objects at
// their literal keys): they open, check out, fork and checkpoint; newer layouts and ref schemas are refused.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { databaseChecksum } from '../../src/ltx/checksum.js';
import { encodeSegment, encodeSnapshotFromDb } from '../../src/ltx/encoder.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { makeContext, type OpsContext } from '../../src/ops/helpers/context/context.js';
import { exportTo } from '../../src/ops/export.js';
import { fork } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { status } from '../../src/ops/status.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { pageDiff } from '../ltx/sqlite-files.js';
import { rejectsCode } from './harness.js';
import { dump, runSql } from './sqlite-cli.js';

const PARENT = '0123456789abcdef0123456789abcdef';
const CHILD = 'fedcba9876543210fedcba9876543210';
const CREATED = '2024-05-01T12:00:00Z';

/** Three WAL-mode database states, each a quiesced file: s1 (table, one row), s2 (+ a row), s3 (+ many rows). */
interface States {
  s1: string;
  s2: string;
  s3: string;
}

function buildStates(dir: string): States {
  const s1 = path.join(dir, 's1.db');
  const db = openDatabase(s1);
  db.pragma('journal_mode = WAL');
  db.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('one');");
  db.close();
  const next = (from: string, name: string, sql: string): string => {
    const file = path.join(dir, name);
    copyFileSync(from, file);
    const d = openDatabase(file);
    d.exec(sql);
    d.close();
    return file;
  };
  const s2 = next(s1, 's2.db', "INSERT INTO t(v) VALUES ('two');");
  const s3 = next(
    s2,
    's3.db',
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300) INSERT INTO t(v) SELECT printf('row %d %.200c', x, '#') FROM c;",
  );
  return { s1, s2, s3 };
}

/** Writes raw bytes at a key of a local store directory, exactly where the earlier implementation put them. */
function putRaw(root: string, key: string, body: Buffer | string): void {
  const file = path.join(root, ...key.split('/'));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, body);
}

async function snapshotBytes(db: string, txid: number, tmp: string): Promise<Buffer> {
  const out = path.join(tmp, `snap-${txid}.ltx`);
  await encodeSnapshotFromDb(db, out, { txid, timestamp: Date.parse(CREATED) });
  return readFileSync(out);
}

/** An LTX segment at txid carrying the pages that differ from `from` to `to`. */
async function segmentBytes(from: string, to: string, txid: number, tmp: string): Promise<Buffer> {
  const a = await databaseChecksum(from);
  const b = await databaseChecksum(to);
  const out = path.join(tmp, `seg-${txid}.ltx`);
  await encodeSegment(out, {
    pageSize: b.pageSize,
    commit: b.commit,
    txid,
    preApplyChecksum: a.checksum,
    postApplyChecksum: b.checksum,
    pages: pageDiff(readFileSync(from), readFileSync(to), b.pageSize),
    timestamp: Date.parse(CREATED),
  });
  return readFileSync(out);
}

const json = (v: unknown): string => JSON.stringify(v);

interface Fixture {
  dir: string;
  root: string;
  states: States;
  dumps: { s1: string; s2: string; s3: string };
  open(): Promise<{ store: Store; ctx: OpsContext }>;
}

async function fixture(build: (root: string, states: States, tmp: string) => Promise<void>): Promise<Fixture> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  const root = path.join(dir, 'store');
  const tmp = path.join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const states = buildStates(tmp);
  await build(root, states, tmp);
  return {
    dir,
    root,
    states,
    dumps: { s1: dump(states.s1), s2: dump(states.s2), s3: dump(states.s3) },
    open: async () => {
      const store = await Store.open(parseStoreSpec(root));
      return { store, ctx: makeContext(store, dir, { warn: () => undefined }) };
    },
  };
}

async function exported(ctx: OpsContext, dir: string, db: string, branch: string, cp?: string): Promise<string> {
  const out = path.join(dir, 'tmp', `export-${branch}-${cp ?? 'head'}-${Math.random().toString(16).slice(2)}.db`);
  await exportTo(ctx, { db, branch, ...(cp !== undefined ? { checkpoint: cp } : {}) }, out);
  return dump(out);
}

describe('a layout-1 store with a schema-1 ref', () => {
  let fx: Fixture;
  before(async () => {
    fx = await fixture(async (root, s, tmp) => {
      putRaw(root, 'offshoot.json', json({ layout_version: 1, created_at: CREATED }));
      // Schema 1: no schema field, checkpoints as bare txids.
      putRaw(
        root,
        'refs/legacy/main',
        json({
          lineage: PARENT,
          epoch: 1,
          head_txid: 3,
          head_epoch: 1,
          checkpoints: { init: 1, two: 2, seeded: 3 },
          protected: true,
          touched_at: CREATED,
        }),
      );
      putRaw(root, `data/${PARENT}/1/snapshot-0000000000000001.ltx`, await snapshotBytes(s.s1, 1, tmp));
      putRaw(
        root,
        `data/${PARENT}/1/segment-0000000000000002-0000000000000002.ltx`,
        await segmentBytes(s.s1, s.s2, 2, tmp),
      );
      putRaw(root, `data/${PARENT}/1/snapshot-0000000000000003.ltx`, await snapshotBytes(s.s3, 3, tmp));
    });
  });
  after(() => rmSync(fx.dir, { recursive: true, force: true }));

  it('opens at layout 1 and reads the ref upgraded in memory', async () => {
    const { store, ctx } = await fx.open();
    assert.equal(store.layoutVersion, 1);
    const { ref } = await store.getRef('legacy', 'main');
    assert.equal(ref.schema, 2);
    assert.deepEqual(Object.fromEntries(Object.entries(ref.checkpoints).map(([k, v]) => [k, [v.txid, v.epoch]])), {
      init: [1, 1],
      two: [2, 1],
      seeded: [3, 1],
    });
    const report = await status(ctx);
    assert.deepEqual(
      report.branches.map((b) => [b.db, b.branch, b.txid, b.storage, b.protected, b.checkpoints]),
      [['legacy', 'main', 3, 'materialized', true, ['init', 'two', 'seeded']]],
    );
  });

  it('checks out and exports every checkpoint', async () => {
    const { ctx } = await fx.open();
    const co = await checkout(ctx, { db: 'legacy', branch: 'main' });
    assert.equal(co.txid, 3);
    assert.equal(dump(co.path), fx.dumps.s3);
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'main', 'init'), fx.dumps.s1);
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'main', 'two'), fx.dumps.s2);
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'main', 'seeded'), fx.dumps.s3);
  });

  it('forks (bumping the manifest to layout 2) and checkpoints', async () => {
    const { store, ctx } = await fx.open();
    const kid = await fork(ctx, { db: 'legacy', branch: 'main' }, 'kid');
    assert.equal(kid.mode, 'shared');
    assert.equal(JSON.parse(readFileSync(path.join(fx.root, 'offshoot.json'), 'utf8')).layout_version, 2);
    assert.equal(store.layoutVersion, 2);
    await fork(ctx, { db: 'legacy', branch: 'main' }, 'at-two', { at: 'two' });
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'kid'), fx.dumps.s3);
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'at-two'), fx.dumps.s2);

    const co = await checkout(ctx, { db: 'legacy', branch: 'main' });
    runSql(co.path, "INSERT INTO t(v) VALUES ('new here');");
    const cp = await checkpoint(ctx, { db: 'legacy', branch: 'main' }, 'four');
    assert.equal(cp.txid, 4);
    const expected = dump(co.path);
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'main', 'four'), expected);
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'kid'), fx.dumps.s3, 'the child is unaffected');

    const again = await fx.open();
    assert.equal(again.store.layoutVersion, 2);
    const raw = JSON.parse(readFileSync(path.join(fx.root, 'refs/legacy/main'), 'utf8'));
    assert.equal(raw.schema, 2, 'a rewritten ref is schema 2');
    assert.deepEqual(raw.checkpoints.init, { txid: 1, epoch: 1 });
    assert.equal(await exported(again.ctx, fx.dir, 'legacy', 'main'), expected);
  });
});

describe('an earlier implementation’s checkout sidecar (hash only)', () => {
  let fx: Fixture;
  before(async () => {
    fx = await fixture(async (root, s, tmp) => {
      putRaw(root, 'offshoot.json', json({ layout_version: 1, created_at: CREATED }));
      putRaw(
        root,
        'refs/legacy/main',
        json({ lineage: PARENT, epoch: 1, head_txid: 3, head_epoch: 1, checkpoints: { init: 1 }, protected: true }),
      );
      putRaw(root, `data/${PARENT}/1/snapshot-0000000000000001.ltx`, await snapshotBytes(s.s1, 1, tmp));
      putRaw(root, `data/${PARENT}/1/snapshot-0000000000000003.ltx`, await snapshotBytes(s.s3, 3, tmp));
    });
  });
  after(() => rmSync(fx.dir, { recursive: true, force: true }));

  function placeCheckout(hash: string): string {
    const co = path.join(fx.dir, 'checkouts', 'legacy', 'main.db');
    mkdirSync(path.dirname(co), { recursive: true });
    copyFileSync(fx.states.s3, co);
    writeFileSync(`${co}.sum`, json({ hash, lineage: PARENT, epoch: 1, txid: 3 }));
    return co;
  }

  it('is trusted after hashing: a matching checkout is reused as it is', async () => {
    const co = placeCheckout(createHash('sha256').update(readFileSync(fx.states.s3)).digest('hex'));
    const before = statSync(co, { bigint: true });
    const { ctx } = await fx.open();
    const r = await checkout(ctx, { db: 'legacy', branch: 'main' });
    assert.equal(r.reused, true);
    assert.equal(statSync(co, { bigint: true }).ino, before.ino);
    runSql(co, "INSERT INTO t(v) VALUES ('after legacy');");
    const expected = dump(co);
    const cp = await checkpoint(ctx, { db: 'legacy', branch: 'main' }, 'next');
    assert.equal(cp.txid, 4);
    assert.equal(await exported(ctx, fx.dir, 'legacy', 'main'), expected);
  });

  it('a mismatching hash means the checkout is re-materialized', async () => {
    const co = placeCheckout('0'.repeat(64));
    runSql(co, "INSERT INTO t(v) VALUES ('local edit');");
    const { ctx, store } = await fx.open();
    const r = await checkout(ctx, { db: 'legacy', branch: 'main' });
    assert.equal(r.reused, false);
    assert.equal(dump(co), await exported(ctx, fx.dir, 'legacy', 'main'));
    assert.equal(r.txid, (await store.getRef('legacy', 'main')).ref.head_txid);
  });
});

describe('a layout-2 store with a shared child (schema-2 ref with base, base.json)', () => {
  let fx: Fixture;
  before(async () => {
    fx = await fixture(async (root, s, tmp) => {
      putRaw(root, 'offshoot.json', json({ layout_version: 2, created_at: CREATED }));
      putRaw(
        root,
        'refs/shared/main',
        json({
          schema: 2,
          lineage: PARENT,
          epoch: 1,
          head_txid: 2,
          head_epoch: 1,
          checkpoints: { init: { txid: 1, epoch: 1, created_at: CREATED }, two: { txid: 2, epoch: 1 } },
          protected: true,
          touched_at: CREATED,
        }),
      );
      putRaw(root, `data/${PARENT}/1/snapshot-0000000000000001.ltx`, await snapshotBytes(s.s1, 1, tmp));
      putRaw(
        root,
        `data/${PARENT}/1/segment-0000000000000002-0000000000000002.ltx`,
        await segmentBytes(s.s1, s.s2, 2, tmp),
      );
      putRaw(
        root,
        'refs/shared/kid',
        json({
          schema: 2,
          lineage: CHILD,
          epoch: 1,
          head_txid: 3,
          head_epoch: 1,
          checkpoints: {
            fork: { txid: 2, epoch: 1, created_at: CREATED },
            mine: { txid: 3, epoch: 1, meta: { run: '7' } },
          },
          parent: 'shared@main@2',
          touched_at: CREATED,
          base: { lineage: PARENT, txid: 2 },
          meta: { agent: 'legacy' },
        }),
      );
      putRaw(root, `data/${CHILD}/base.json`, json({ lineage: PARENT, txid: 2 }));
      putRaw(
        root,
        `data/${CHILD}/1/segment-0000000000000003-0000000000000003.ltx`,
        await segmentBytes(s.s2, s.s3, 3, tmp),
      );
    });
  });
  after(() => rmSync(fx.dir, { recursive: true, force: true }));

  it('reads through the base: head, fork point and the parent all materialize', async () => {
    const { ctx } = await fx.open();
    const co = await checkout(ctx, { db: 'shared', branch: 'kid' });
    assert.equal(dump(co.path), fx.dumps.s3);
    assert.equal(await exported(ctx, fx.dir, 'shared', 'kid', 'fork'), fx.dumps.s2);
    assert.equal(await exported(ctx, fx.dir, 'shared', 'kid', 'mine'), fx.dumps.s3);
    assert.equal(await exported(ctx, fx.dir, 'shared', 'main'), fx.dumps.s2);
    assert.equal(await exported(ctx, fx.dir, 'shared', 'main', 'init'), fx.dumps.s1);
    const kid = (await status(ctx)).branches.find((b) => b.branch === 'kid');
    assert.equal(kid?.storage, 'shared');
  });

  it('forks at head and at the fork point, checkpoints, and survives GC', async () => {
    const { store, ctx } = await fx.open();
    const g = await fork(ctx, { db: 'shared', branch: 'kid' }, 'grandkid');
    assert.equal(g.mode, 'shared');
    assert.deepEqual((await store.getRef('shared', 'grandkid')).ref.base, { lineage: CHILD, txid: 3 });
    await fork(ctx, { db: 'shared', branch: 'kid' }, 'at-fork', { at: 'fork' });
    assert.deepEqual(
      (await store.getRef('shared', 'at-fork')).ref.base,
      { lineage: PARENT, txid: 2 },
      'the pass-through hop is skipped',
    );

    const co = await checkout(ctx, { db: 'shared', branch: 'kid' });
    runSql(co.path, "DELETE FROM t WHERE id % 2 = 0; INSERT INTO t(v) VALUES ('kid wrote this');");
    const cp = await checkpoint(ctx, { db: 'shared', branch: 'kid' }, 'four');
    assert.equal(cp.txid, 4);
    const expected = dump(co.path);

    await runGc(ctx, { grace: 0n });
    await runGc(ctx, { grace: 0n });
    const cold = makeContext(store, path.join(fx.dir, 'cold'), { warn: () => undefined });
    assert.equal(await exported(cold, fx.dir, 'shared', 'kid'), expected);
    assert.equal(await exported(cold, fx.dir, 'shared', 'kid', 'mine'), fx.dumps.s3);
    assert.equal(await exported(cold, fx.dir, 'shared', 'grandkid'), fx.dumps.s3);
    assert.equal(await exported(cold, fx.dir, 'shared', 'at-fork'), fx.dumps.s2);
    assert.equal(await exported(cold, fx.dir, 'shared', 'main', 'init'), fx.dumps.s1);
  });
});

describe('newer formats are refused', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a layout-4 manifest: LAYOUT_TOO_NEW', async () => {
    const root = path.join(dir, 'l4');
    putRaw(root, 'offshoot.json', json({ layout_version: 4, created_at: CREATED }));
    const err = await rejectsCode(Store.open(parseStoreSpec(root)), 'LAYOUT_TOO_NEW');
    assert.match(err.message, /layout version 4 is newer than this binary supports \(3\)/);
  });

  it('a schema-3 ref: SCHEMA_TOO_NEW, from every reader', async () => {
    const root = path.join(dir, 's3');
    putRaw(root, 'offshoot.json', json({ layout_version: 2, created_at: CREATED }));
    putRaw(
      root,
      'refs/future/main',
      json({ schema: 3, lineage: PARENT, epoch: 1, head_txid: 1, head_epoch: 1, checkpoints: {}, something_new: true }),
    );
    const store = await Store.open(parseStoreSpec(root));
    const ctx = makeContext(store, dir, { warn: () => undefined });
    await rejectsCode(store.getRef('future', 'main'), 'SCHEMA_TOO_NEW');
    await rejectsCode(checkout(ctx, { db: 'future', branch: 'main' }), 'SCHEMA_TOO_NEW');
    await rejectsCode(fork(ctx, { db: 'future', branch: 'main' }, 'kid'), 'SCHEMA_TOO_NEW');
    await rejectsCode(status(ctx), 'SCHEMA_TOO_NEW');
    await rejectsCode(runGc(ctx, { grace: 0n }), 'SCHEMA_TOO_NEW');
    assert.equal(
      JSON.parse(readFileSync(path.join(root, 'refs/future/main'), 'utf8')).schema,
      3,
      'the ref is left as it was',
    );
  });

  it('a directory without a manifest: NOT_INITIALIZED', async () => {
    const root = path.join(dir, 'empty');
    mkdirSync(root, { recursive: true });
    await rejectsCode(Store.open(parseStoreSpec(root)), 'NOT_INITIALIZED');
  });
});
