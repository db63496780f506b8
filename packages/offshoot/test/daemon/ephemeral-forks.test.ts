// The contract of ephemeral forks, on a real daemon over a real socket, with a local store and a bucket on the S3 test
// server: a discarded one writes nothing to the store (every request to the store is counted through a wrapper around
// the real backend, and its keys compared); a kept one is an ordinary durable branch another daemon reads; one the
// daemon still holds keeps its source from GC, even with `gc --grace 0s`; and a daemon that stops takes its
// ephemeral forks and their checkouts with it.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseDuration } from '../../src/core/duration.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import type { Response } from '../../src/protocol/wire.js';
import { canonicalStore } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { openS3TestStore, openTestS3Backend } from '../s3e2e/s3-store.js';
import { S3_ENDPOINT, S3_SERVER } from '../store/s3-test-env.js';
import { CountingBackend } from '../ops/counting-backend.js';
import { openTestStore, type TestStore } from '../ops/harness.js';
import { query, runSql } from '../ops/sqlite-cli.js';
import { LineClient } from './daemon-process.js';

const KINDS = S3_SERVER === 'rgw' ? (['s3'] as const) : (['local', 's3'] as const);

/** The store requests that write: none may name anything but the liveness object for a discarded fork. */
function writes(c: CountingBackend): string[] {
  return c.calls
    .filter((x) => x.op === 'put' || x.op === 'delete' || x.op === 'deleteMany' || x.op === 'copy')
    .map((x) => `${x.op} ${x.key}`);
}

function startDaemon(store: Store, root: string, sock: string): Promise<Daemon> {
  mkdirSync(root, { recursive: true });
  return Daemon.start(
    store,
    root,
    {
      store: canonicalStore(store.spec),
      socket: sock,
      flushEveryMs: 0,
      snapshotEvery: 16,
      reapEveryMs: 0,
      gcGrace: parseDuration('1h'),
      roCacheBudget: 0,
      maxOpen: 64,
      // No periodic liveness write during a test: each one it sees is a pin's.
      leaseTtlMs: 600_000,
      renewEveryMs: 600_000,
      log: () => undefined,
    },
    'test',
  );
}

for (const kind of KINDS) {
  describe(`ephemeral forks (${kind} store)`, { timeout: 600_000 }, () => {
    if (kind === 's3' && S3_ENDPOINT === undefined) {
      it('needs the S3 test server', {
        skip: process.env.CI !== 'true' && 'run through scripts/with-s3-server.sh',
      }, () => {
        assert.fail('OFFSHOOT_TEST_S3_ENDPOINT is not set; run through scripts/with-s3-server.sh (make test does)');
      });
      return;
    }
    let ts: TestStore;
    let counting!: CountingBackend;
    let daemon: Daemon;
    let c: LineClient;
    let other: { store: Store; daemon: Daemon; c: LineClient } | undefined;

    const ok = async (req: Record<string, unknown>, client: LineClient = c): Promise<Response> => {
      const res = await client.request(req);
      assert.equal(res.ok, true, `${JSON.stringify(req)}: ${JSON.stringify(res)}`);
      return res;
    };
    /** Every key of the store but the liveness objects. */
    const storeKeys = async (): Promise<string[]> =>
      (await ts.store.backend.listKeys('')).filter((k) => !k.startsWith('liveness/'));

    /** A second daemon on the same store, with its own backend, checkout root and socket: another machine. */
    const secondDaemon = async () => {
      if (other !== undefined) return other;
      const backend =
        kind === 's3'
          ? await openTestS3Backend((ts as { bucket: { name: string } } & TestStore).bucket.name, 'store')
          : undefined;
      const store = await Store.open(ts.spec, backend === undefined ? {} : { backend });
      const d = await startDaemon(store, path.join(ts.dir, 'co2'), path.join(ts.dir, 'd2.sock'));
      other = { store, daemon: d, c: await LineClient.connect(d.addresses.socket) };
      return other;
    };

    before(async () => {
      const wrap = { wrap: (b: import('../../src/store/backend.js').Backend) => (counting = new CountingBackend(b)) };
      ts = kind === 's3' ? await openS3TestStore(wrap) : await openTestStore(wrap);
      const seed = ts.tmpPath('seed.db');
      runSql(seed, 'CREATE TABLE t(x INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES (1), (2), (3);');
      await create(ts.ctx, 'app', { from: seed });
      daemon = await startDaemon(ts.store, path.join(ts.dir, 'co1'), path.join(ts.dir, 'd1.sock'));
      c = await LineClient.connect(daemon.addresses.socket);
    });

    after(async () => {
      c?.close();
      other?.c.close();
      await other?.daemon.shutdown();
      await other?.store.close();
      await daemon?.shutdown();
      await ts?.cleanup();
    });

    it('a discarded ephemeral fork writes nothing to the store; the first fork at a fork point writes one pin', async () => {
      counting.reset();
      const first = await ok({ op: 'fork', db: 'app', branch: 'main', name: 'warm', from: 'init', ephemeral: true });
      assert.equal(first.ephemeral, true, 'the daemon echoes ephemeral');
      assert.deepEqual(
        writes(counting).filter((w) => !w.includes('liveness/')),
        [],
        'the first fork wrote only its pin',
      );
      assert.equal(writes(counting).length, 1, 'one liveness write carries the new pin');
      await ok({ op: 'destroy', db: 'app', branch: 'warm' });
      const before = await storeKeys();
      counting.reset();
      for (let i = 0; i < 3; i++) {
        const ep = `ep${i}`;
        await ok({ op: 'fork', db: 'app', branch: 'main', name: ep, from: 'init', ephemeral: true });
        const { checkout } = await ok({ op: 'open', db: 'app', branch: ep });
        runSql(checkout as string, `INSERT INTO t(v) VALUES ('episode ${i}');`);
        await ok({ op: 'flush', db: 'app', branch: ep });
        const listed = await ok({ op: 'branches', db: 'app' });
        assert.equal(listed.branches?.find((b) => b.branch === ep)?.ephemeral, true, 'branches says ephemeral');
        assert.equal(listed.branches?.find((b) => b.branch === 'main')?.ephemeral, undefined);
        const sessions = await ok({ op: 'status' });
        assert.equal(sessions.sessions?.find((s) => s.branch === ep)?.ephemeral, true, 'status says ephemeral');
        const diff = await ok({ op: 'diff', db: 'app', branch: 'main', name: 'init', to: `app@${ep}` });
        const t = (diff.result as { tables: Array<{ table: string; added: unknown[] }> }).tables[0];
        assert.equal(t?.added.length, 1, 'the diff sees the flushed row');
        const q = await ok({ op: 'query', db: 'app', branch: ep, sql: 'SELECT count(*) FROM t' });
        assert.deepEqual((q.result as { rows: unknown[][] }).rows, [[4]]);
        const out = ts.tmpPath(`${ep}.db`);
        await ok({ op: 'export', db: 'app', branch: ep, path: out });
        assert.equal(query(out, 'SELECT count(*) FROM t').trim(), '4');
        await ok({ op: 'close', db: 'app', branch: ep });
        await ok({ op: 'destroy', db: 'app', branch: ep });
        assert.equal(existsSync(checkout as string), false, 'destroy removed the checkout');
      }
      // A batch of ephemeral forks, checked out and discarded.
      const batch = await ok({
        op: 'fork',
        db: 'app',
        branch: 'main',
        names: ['b0', 'b1'],
        from: 'init',
        ephemeral: true,
      });
      assert.deepEqual([batch.forks, batch.ephemeral], [['b0', 'b1'], true]);
      for (const b of ['b0', 'b1']) {
        const { checkout } = await ok({ op: 'checkout', db: 'app', branch: b });
        runSql(checkout as string, 'DELETE FROM t;');
        await ok({ op: 'destroy', db: 'app', branch: b });
      }
      assert.deepEqual(writes(counting), [], 'no request wrote to the store');
      assert.deepEqual(await storeKeys(), before, 'the store holds the same objects');
    });

    it('a kept ephemeral fork is an ordinary durable branch another daemon reads', async () => {
      await ok({ op: 'fork', db: 'app', branch: 'main', name: 'keeper', from: 'init', ephemeral: true });
      const { checkout } = await ok({ op: 'open', db: 'app', branch: 'keeper' });
      runSql(checkout as string, "INSERT INTO t(v) VALUES ('kept');");
      counting.reset();
      await ok({ op: 'flush', db: 'app', branch: 'keeper', name: 'done' });
      assert.ok(
        writes(counting).some((w) => w === 'put refs/app/keeper'),
        `the keep wrote the ref: ${writes(counting).join(', ')}`,
      );
      const listed = await ok({ op: 'branches', db: 'app' });
      assert.equal(listed.branches?.find((b) => b.branch === 'keeper')?.ephemeral, undefined, 'no longer ephemeral');
      runSql(checkout as string, "INSERT INTO t(v) VALUES ('after the keep');");
      await ok({ op: 'close', db: 'app', branch: 'keeper' });
      const two = await secondDaemon();
      const theirs = await ok({ op: 'branches', db: 'app' }, two.c);
      const keeper = theirs.branches?.find((b) => b.branch === 'keeper');
      assert.ok(keeper !== undefined, 'the other daemon lists the kept branch');
      assert.equal(keeper.ephemeral, undefined);
      assert.ok(keeper.checkpoints.includes('done'));
      const at = await ok(
        { op: 'query', db: 'app', branch: 'keeper', name: 'done', sql: 'SELECT v FROM t ORDER BY x' },
        two.c,
      );
      assert.deepEqual((at.result as { rows: unknown[][] }).rows, [['1'], ['2'], ['3'], ['kept']]);
      const head = await ok({ op: 'query', db: 'app', branch: 'keeper', sql: 'SELECT count(*) FROM t' }, two.c);
      assert.deepEqual((head.result as { rows: unknown[][] }).rows, [[5]], 'the close after the keep is durable too');
    });

    it("an ephemeral fork's log is held with it (its spills too): kept, the store has every record; discarded, none", async () => {
      type Logged = { records: Array<{ seq: number; op: string }> };
      const logKeys = async (branch: string) =>
        (await ts.store.backend.listKeys(`log/app/${branch}/`)).filter((k) => k.endsWith('.jsonl'));
      // Twelve flushes pass the ref's tail (8 records), so the log spills while the fork is held.
      const flushes = async (branch: string) => {
        const { checkout } = await ok({ op: 'open', db: 'app', branch });
        for (let i = 0; i < 12; i++) {
          runSql(checkout as string, `INSERT INTO t(v) VALUES ('${branch} ${i}');`);
          await ok({ op: 'flush', db: 'app', branch });
        }
      };
      const before = await storeKeys();
      await ok({ op: 'fork', db: 'app', branch: 'main', name: 'tossed', from: 'init', ephemeral: true });
      await flushes('tossed');
      const held = (await ok({ op: 'log', db: 'app', branch: 'tossed', limit: 0 })).result as Logged;
      assert.deepEqual(
        held.records.map((r) => r.op),
        ['fork', ...Array<string>(12).fill('flush')],
        'the daemon reads the held log whole, spilled records included',
      );
      assert.deepEqual(await logKeys('tossed'), [], 'no log object reached the store');
      await ok({ op: 'close', db: 'app', branch: 'tossed' });
      await ok({ op: 'destroy', db: 'app', branch: 'tossed' });
      assert.deepEqual(await storeKeys(), before, 'a discarded fork leaves no log behind');

      await ok({ op: 'fork', db: 'app', branch: 'main', name: 'logged', from: 'init', ephemeral: true });
      await flushes('logged');
      assert.deepEqual(await logKeys('logged'), [], 'held until kept');
      await ok({ op: 'flush', db: 'app', branch: 'logged', name: 'keep-it' });
      await ok({ op: 'close', db: 'app', branch: 'logged' });
      assert.ok((await logKeys('logged')).length > 0, 'the keep wrote the spilled records to the store');
      const two = await secondDaemon();
      const theirs = (await ok({ op: 'log', db: 'app', branch: 'logged', limit: 0 }, two.c)).result as Logged;
      const ops = theirs.records.map((r) => r.op);
      assert.deepEqual(ops.slice(0, 13), ['fork', ...Array<string>(12).fill('flush')], 'every held record kept');
      assert.deepEqual(
        theirs.records.map((r) => r.seq),
        ops.map((_, i) => i + 1),
        'one unbroken sequence, read by another daemon',
      );
      assert.ok(ops.includes('checkpoint'), `the keeping flush is recorded: ${ops.join(' ')}`);
    });

    it('a keep the store refuses (the name was made there meanwhile) leaves no log object of the held fork', async () => {
      await ok({ op: 'fork', db: 'app', branch: 'main', name: 'dup', from: 'init', ephemeral: true });
      const { checkout } = await ok({ op: 'open', db: 'app', branch: 'dup' });
      for (let i = 0; i < 12; i++) {
        runSql(checkout as string, `INSERT INTO t(v) VALUES ('dup ${i}');`);
        await ok({ op: 'flush', db: 'app', branch: 'dup' });
      }
      const logId = ((await ok({ op: 'log', db: 'app', branch: 'dup' })).result as { log_id: string }).log_id;
      // Another writer makes a durable branch of that name in the store, unseen by this daemon.
      await fork(ts.ctx, { db: 'app', branch: 'main' }, 'dup');
      const refused = await c.request({ op: 'flush', db: 'app', branch: 'dup', name: 'keep-it' });
      assert.equal(refused.ok, false, JSON.stringify(refused));
      assert.equal(refused.code, 'ALREADY_EXISTS');
      assert.deepEqual(
        await ts.store.backend.listKeys(`log/app/dup/${logId}/`),
        [],
        'no log object of the held fork reached the store',
      );
      const held = (await ok({ op: 'log', db: 'app', branch: 'dup', limit: 0 })).result as {
        records: Array<{ op: string }>;
      };
      assert.deepEqual(
        held.records.slice(0, 13).map((r) => r.op),
        ['fork', ...Array<string>(12).fill('flush')],
        'the daemon still reads the held log whole',
      );
      await ok({ op: 'close', db: 'app', branch: 'dup' });
      await ok({ op: 'destroy', db: 'app', branch: 'dup' });
    });

    it('an ephemeral fork held by the daemon keeps its source from GC, and keeps correctly after', async () => {
      await ok({ op: 'fork', db: 'app', branch: 'main', name: 'src' });
      const src = (await ok({ op: 'checkout', db: 'app', branch: 'src' })).checkout as string;
      runSql(src, "INSERT INTO t(v) VALUES ('from src');");
      await ok({ op: 'checkpoint', db: 'app', branch: 'src', name: 'cp' });
      await ok({ op: 'fork', db: 'app', branch: 'src', name: 'held', from: 'cp', ephemeral: true });
      const { checkout } = await ok({ op: 'open', db: 'app', branch: 'held' });
      runSql(checkout as string, "INSERT INTO t(v) VALUES ('from held');");
      await ok({ op: 'flush', db: 'app', branch: 'held' });
      await ok({ op: 'destroy', db: 'app', branch: 'src' });
      // The first pass tombstones what no ref reaches, the second deletes what is still unreached.
      for (let i = 0; i < 2; i++) await ok({ op: 'gc', grace: '0s' });
      const rows = await ok({ op: 'query', db: 'app', branch: 'held', sql: 'SELECT v FROM t ORDER BY x' });
      assert.deepEqual((rows.result as { rows: unknown[][] }).rows, [['1'], ['2'], ['3'], ['from src'], ['from held']]);
      await ok({ op: 'close', db: 'app', branch: 'held' });
      const path2 = (await ok({ op: 'checkout', db: 'app', branch: 'held' })).checkout as string;
      assert.equal(query(path2, 'SELECT count(*) FROM t').trim(), '5');
      await ok({ op: 'checkpoint', db: 'app', branch: 'held', name: 'kept' });
      for (let i = 0; i < 2; i++) await ok({ op: 'gc', grace: '0s' });
      const two = await secondDaemon();
      const theirs = await ok(
        { op: 'query', db: 'app', branch: 'held', name: 'kept', sql: 'SELECT v FROM t ORDER BY x' },
        two.c,
      );
      assert.deepEqual((theirs.result as { rows: unknown[][] }).rows, [
        ['1'],
        ['2'],
        ['3'],
        ['from src'],
        ['from held'],
      ]);
    });

    it('a daemon that stops takes its ephemeral forks and their checkouts with it', async () => {
      await ok({ op: 'fork', db: 'app', branch: 'main', name: 'gone', from: 'init', ephemeral: true });
      const { checkout } = await ok({ op: 'checkout', db: 'app', branch: 'gone' });
      runSql(checkout as string, "INSERT INTO t(v) VALUES ('lost');");
      const two = await secondDaemon();
      const before = await ok({ op: 'branches', db: 'app' }, two.c);
      assert.equal(
        before.branches?.some((b) => b.branch === 'gone'),
        false,
        'another daemon never sees an ephemeral fork',
      );
      c.close();
      await daemon.shutdown();
      assert.equal(existsSync(checkout as string), false, 'its checkout went with it');
      assert.deepEqual(
        readdirSync(path.join(ts.dir, 'co1', '.scratch', 'ephemeral')).filter((n) => n !== 'checkouts'),
        [],
      );
      assert.equal(await ts.store.tryGetRef('app', 'gone'), undefined, 'the store never had it');
      daemon = await startDaemon(ts.store, path.join(ts.dir, 'co1'), path.join(ts.dir, 'd1.sock'));
      c = await LineClient.connect(daemon.addresses.socket);
      const listed = await ok({ op: 'branches', db: 'app' });
      assert.equal(
        listed.branches?.some((b) => b.branch === 'gone'),
        false,
        'a restarted daemon has lost it',
      );
    });
  });
}
