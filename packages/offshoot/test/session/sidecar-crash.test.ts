// A checkout's sidecars (`.sum`, `.pages`) and a session's capture state are written without fsync. A crash can then
// leave any earlier version of a sidecar, an empty one, or none: none of those may ever make a checkout pass for the
// durable head when it holds something else, and what capture builds on them must still reach the store exactly.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { captureStatePath } from '../../src/capture/capture-state.js';
import { headIdentity } from '../../src/ops/helpers/branch/branch-ref.js';
import { checkout } from '../../src/ops/checkout.js';
import { acquireLease, releaseLease } from '../../src/ops/lease.js';
import { create } from '../../src/ops/create.js';
import { startCapture, stopCapture } from '../../src/session/live-capture.js';
import { Session } from '../../src/session/session.js';
import {
  backdatedSeconds,
  checkClean,
  fingerprintOf,
  readSidecar,
  sameIdentity,
  sidecarPath,
  writeSidecar,
} from '../../src/sqlite/checkout-sidecar.js';
import { pageSumsPath } from '../../src/sqlite/page-sums.js';
import { exportDump, openTestStore, type TestStore } from '../ops/harness.js';
import { dump, runSql } from '../ops/sqlite-cli.js';

describe('checkout sidecars a crash left behind', () => {
  let ts: TestStore;
  const t = { db: 'app', branch: 'main' };

  before(async () => {
    ts = await openTestStore();
    const src = ts.tmpPath('src.db');
    runSql(src, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('seed');");
    await create(ts.ctx, 'app', { from: src });
  });
  after(async () => ts.cleanup());

  const live = () => ts.context({ now: () => new Date(), holder: 'daemon-host/1' });

  // Writes one row through a session and closes it: the checkout is then stamped as the new head.
  async function writeThroughSession(value: string): Promise<string> {
    const s = await Session.open(live(), t, {});
    try {
      assert.deepEqual(s.warnings, [], 'the checkout held nothing the store lacks');
      runSql(s.path, `INSERT INTO t(v) VALUES ('${value}');`);
    } finally {
      await s.close();
    }
    return s.path;
  }

  // The checkout and the head it should hold agree row for row, and both have every value.
  async function assertCheckoutIsHead(co: string, values: string[]): Promise<void> {
    const head = await exportDump(ts, t);
    for (const v of values) assert.match(head, new RegExp(`'${v}'`), `the head has ${v}`);
    assert.equal(dump(co), head, 'the checkout holds exactly the head');
  }

  /**
   * Runs a process of its own that opens a session, writes `row`, and closes it with `hook` (module text run first,
   * with `s`, `Database` (the engine's connection class), `fs`, `fsp`, the sidecar helpers and `syncBuiltinESMExports` in scope) killing it midway;
   * then checks that the checkout never reads clean, the store lacks the row and the next open keeps it as an undo
   * branch.
   */
  async function closeKilledMidway(co: string, name: string, row: string, hook: string): Promise<void> {
    const src = (rel: string): string => new URL(`../../src/${rel}`, import.meta.url).href;
    const child = path.join(ts.dir, `${name}.mts`);
    writeFileSync(
      child,
      `import { SqliteDatabase as Database } from '${src('sqlite/sqlite-database.js')}';
import { openDatabase } from '${src('sqlite/sqlite-driver.js')}';
import { Store } from '${src('store/store.js')}';
import { parseStoreSpec } from '${src('store/store-spec.js')}';
import { makeContext } from '${src('ops/helpers/context/context.js')}';
import { Session } from '${src('session/session.js')}';
import { fingerprintOf, readSidecar, sidecarPath } from '${src('sqlite/checkout-sidecar.js')}';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
const [storeDir, root] = process.argv.slice(2);
const ctx = makeContext(await Store.open(parseStoreSpec(storeDir)), root, { warn: () => undefined });
const s = await Session.open(ctx, { db: 'app', branch: 'main' }, {});
const db = openDatabase(s.path);
db.exec("INSERT INTO t(v) VALUES ('${row}')");
db.close();
${hook}await s.close();
`,
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', child, path.join(ts.dir, 'store'), ts.dir], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      encoding: 'utf8',
    });
    assert.equal(run.signal, 'SIGKILL', run.stderr);
    assert.notEqual(await checkClean(co, readSidecar(co)), 'clean', 'the checkout never passes for the head');
    assert.doesNotMatch(await exportDump(ts, t), new RegExp(row), 'the last flush never reached the store');
    const again = await Session.open(live(), t, {});
    let kept: string | undefined;
    try {
      assert.equal(again.warnings.length, 1, 'the write is kept as an undo branch');
      kept = /kept as app@(\S+) /.exec(again.warnings[0] ?? '')?.[1];
    } finally {
      await again.close();
    }
    assert.ok(kept !== undefined, again.warnings[0]);
    assert.match(await exportDump(ts, { db: 'app', branch: kept }), new RegExp(row));
  }

  it('a lost, emptied or torn sidecar never reads clean at the head, and the next session still flushes exactly', async () => {
    const co = await writeThroughSession('first');
    const values = ['seed', 'first'];
    const damages: Array<[string, () => void]> = [
      ['.sum removed', () => rmSync(sidecarPath(co))],
      ['.sum empty', () => truncateSync(sidecarPath(co), 0)],
      ['.sum half written', () => truncateSync(sidecarPath(co), 20)],
      ['.pages empty', () => truncateSync(pageSumsPath(co), 0)],
      ['.pages removed', () => rmSync(pageSumsPath(co))],
    ];
    for (const [what, damage] of damages) {
      damage();
      const sc = readSidecar(co);
      if (what.startsWith('.sum')) {
        assert.equal(sc, undefined, `${what}: no sidecar is read`);
        assert.notEqual(await checkClean(co, sc), 'clean', `${what}: never clean`);
      }
      const value = `after ${what}`;
      await writeThroughSession(value);
      values.push(value);
      await assertCheckoutIsHead(co, values);
      assert.equal(await checkClean(co, readSidecar(co)), 'clean', `${what}: stamped again at close`);
    }
  });

  it('an earlier sidecar whose fingerprint matches the file never passes for the head', async () => {
    const s = await Session.open(live(), t, {});
    const co = s.path;
    const keep = ts.tmpPath('kept');
    mkdirSync(keep);
    copyFileSync(sidecarPath(co), path.join(keep, 'sum'));
    copyFileSync(pageSumsPath(co), path.join(keep, 'pages'));
    const earlier = readSidecar(co);
    try {
      runSql(co, "INSERT INTO t(v) VALUES ('past the earlier sidecar');");
    } finally {
      await s.close();
    }
    // The worst a crash can leave: the sidecars of the head the session started from, with the file's fingerprint
    // as it is now (a stamp in the same second, the same size, the same inode).
    assert.ok(earlier);
    writeFileSync(sidecarPath(co), JSON.stringify({ ...earlier, ...fingerprintOf(co) }));
    copyFileSync(path.join(keep, 'pages'), pageSumsPath(co));
    const { ref } = await ts.store.getRef(t.db, t.branch);
    assert.equal(await checkClean(co, readSidecar(co)), 'clean', 'the fingerprint matches');
    assert.equal(sameIdentity(readSidecar(co), headIdentity(ref)), false, 'but it names an earlier head');

    const r = await checkout(live(), t);
    assert.equal(r.reused, false, 'not taken for the head: the head is materialized again');
    assert.equal(r.txid, ref.head_txid);
    await assertCheckoutIsHead(co, ['seed', 'past the earlier sidecar']);
    await writeThroughSession('after the earlier sidecar');
    await assertCheckoutIsHead(co, ['past the earlier sidecar', 'after the earlier sidecar']);
  });

  it('a session closed without flushing what it captured leaves its checkout unproven, and the next open keeps it', async () => {
    const s = await Session.open(live(), t, { renewEveryMs: 3_600_000 });
    const co = s.path;
    const opened = readSidecar(co);
    // Another holder takes the branch (from its clock the lease has lapsed): the session is fenced, its writes stay.
    const outsider = ts.context({ now: () => new Date(Date.now() + 3_600_000), holder: 'elsewhere/2' });
    try {
      runSql(co, "INSERT INTO t(v) VALUES ('never flushed');");
      await acquireLease(outsider, t);
      await assert.rejects(s.flush({ kind: 'manual' }));
      assert.equal(s.error?.code, 'FENCED');
    } finally {
      await s.close();
    }
    await releaseLease(outsider, t);
    // Capture's stop moved the mtime a minute back; had it stayed there, a session opened and closed within one
    // second would match the sidecars it opened with and read clean while holding a write the store lacks.
    assert.ok(statSync(co).mtimeMs > Date.now() - 30_000, 'the mtime is no stamp');
    assert.deepEqual(readSidecar(co), opened, 'the sidecars are the ones it opened with');
    assert.notEqual(await checkClean(co, readSidecar(co)), 'clean');
    const again = await Session.open(live(), t, {});
    try {
      assert.equal(again.warnings.length, 1, 'the unflushed write is kept as an undo branch');
    } finally {
      await again.close();
    }
    assert.doesNotMatch(await exportDump(ts, t), /never flushed/);
    assert.match(await exportDump(ts, { db: 'app', branch: 'main-pre-reopen' }), /never flushed/);
  });

  it('a daemon killed after capture stopped but before it marked the checkout unproven keeps the unflushed write', async () => {
    const co = (await checkout(live(), t)).path;
    const { ref } = await ts.store.getRef(t.db, t.branch);
    const stamped = readSidecar(co);
    assert.ok(stamped && (await checkClean(co, stamped)) === 'clean', 'a clean checkout at the head');
    // A session writes in place (the file keeps its size) and closes in the second its sidecars were stamped in; its
    // last flush failed, so capture's stop is followed by markUnproven, and the daemon is killed between the two. The
    // second is the clock's: the sidecars are given the stamp of the current one, tried again until the stop lands
    // in it (whether it did or not, the checkout must not read clean afterwards).
    for (let attempt = 0; attempt < 20; attempt++) {
      const cap = await startCapture(co, ref, {
        dir: ts.tmpPath(`killed-capture-${attempt}`),
        log: () => undefined,
        onFailure: () => undefined,
      });
      runSql(co, `UPDATE t SET v = 'never flushed ${attempt}' WHERE id = 1;`);
      const second = backdatedSeconds(Date.now());
      await writeSidecar(co, {
        ...stamped,
        ...fingerprintOf(co),
        mtime_ns: (BigInt(second) * 1_000_000_000n).toString(),
      });
      const stopped = await stopCapture(co, cap);
      assert.equal(stopped.settled, false, 'the write was captured, never flushed');
      if (backdatedSeconds(Date.now()) === second) break;
    }
    assert.equal(fingerprintOf(co).size, stamped.size, 'the write kept the file its size');
    assert.ok(sameIdentity(readSidecar(co), headIdentity(ref)), 'the sidecars name the head');
    assert.notEqual(await checkClean(co, readSidecar(co)), 'clean', 'a checkout holding an unflushed write');
    const again = await Session.open(live(), t, {});
    let kept: string | undefined;
    try {
      assert.equal(again.warnings.length, 1, 'the unflushed write is kept as an undo branch');
      kept = /kept as app@(\S+) /.exec(again.warnings[0] ?? '')?.[1];
    } finally {
      await again.close();
    }
    assert.ok(kept);
    assert.doesNotMatch(await exportDump(ts, t), /never flushed/);
    assert.match(await exportDump(ts, { db: 'app', branch: kept }), /never flushed/);
  });

  it('a kill -9 once close stopped capture, before its last flush reached the store, loses nothing', async () => {
    const co = await writeThroughSession('before the kill');
    // A process of its own opens a session, writes, and closes it; it kills itself once capture's last checkpoint
    // emptied the -wal, after the stop backdated the checkout (possibly to the second its sidecar was stamped) and
    // before the head's ref write, so its lease is still held by a process that is gone.
    await closeKilledMidway(
      co,
      'close-killed',
      'written before close',
      `const proto = Database.prototype;
const real = proto.pragma;
proto.pragma = function (src, opts) {
  const out = real.call(this, src, opts);
  if (src === 'wal_checkpoint(TRUNCATE)') {
    // The worst case: whatever sidecar is left was stamped in the second the stop backdated the checkout to.
    const sc = readSidecar(s.path);
    if (sc !== undefined) fs.writeFileSync(sidecarPath(s.path), JSON.stringify({ ...sc, ...fingerprintOf(s.path) }));
    process.kill(process.pid, 'SIGKILL');
  }
  return out;
};
`,
    );
    await assertCheckoutIsHead(co, ['seed', 'before the kill']);
  });

  it('a kill -9 once close emptied the -wal finds the sidecar withdrawn, though withdrawing it ran beside the stop', async () => {
    const co = await writeThroughSession('before the backdate');
    // The withdrawal runs beside capture's drain and checkpoint; here its unlink is held until RESTART has folded the
    // -wal and a while after, so nothing but the wait before the backdate keeps it from landing while the sidecar is
    // there.
    // The child kills itself once capture's last checkpoint emptied the -wal (the checkout could pass for a head from
    // then on), after forging whatever sidecar is left to match the backdated file.
    await closeKilledMidway(
      co,
      'backdate-killed',
      'written before the backdate',
      `let restarted;
const folded = new Promise((resolve) => (restarted = resolve));
const proto = Database.prototype;
const realPragma = proto.pragma;
proto.pragma = function (text, opts) {
  const out = realPragma.call(this, text, opts);
  if (text === 'wal_checkpoint(RESTART)') restarted();
  if (text === 'wal_checkpoint(TRUNCATE)') {
    const sc = readSidecar(s.path);
    if (sc !== undefined) fs.writeFileSync(sidecarPath(s.path), JSON.stringify({ ...sc, ...fingerprintOf(s.path) }));
    process.kill(process.pid, 'SIGKILL');
  }
  return out;
};
const realUnlink = fsp.unlink;
fsp.unlink = async (p) => {
  if (p === sidecarPath(s.path)) {
    await folded;
    // Held a few turns of the event loop longer, as a slow disk would hold it: the stop's own steps after RESTART
    // (the race checks, each a stat or a read of the -wal) would otherwise run into the backdate first.
    for (let turn = 0; turn < 20; turn++) await new Promise((next) => setImmediate(next));
  }
  return realUnlink(p);
};
syncBuiltinESMExports();
`,
    );
  });
});

describe("a session capture's state file", () => {
  it('is never resumed from: capture refuses a directory an earlier capture used', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    try {
      const db = path.join(tmp, 'c.db');
      runSql(db, 'PRAGMA journal_mode=WAL; CREATE TABLE t(x);');
      const dir = path.join(tmp, 'capture-1');
      mkdirSync(path.join(dir, 'engine'), { recursive: true });
      writeFileSync(
        captureStatePath(path.join(dir, 'engine')),
        JSON.stringify({ off: 0, salt1: 0, salt2: 0, clean: true }),
      );
      await assert.rejects(
        startCapture(db, { lineage: 'x', head_txid: 1, head_epoch: 1 } as never, {
          dir,
          log: () => undefined,
          onFailure: () => undefined,
        }),
        (err: NodeJS.ErrnoException) => err.code === 'EEXIST',
      );
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
