// The branch log and moments as targets, against any store (a local one, or S3 through the test server): the same
// cases run on both.
import assert from 'node:assert/strict';
import { checkout } from '../../src/ops/checkout.js';
import { checkoutAt } from '../../src/ops/checkout-at.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { config } from '../../src/ops/config.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { diff } from '../../src/ops/diff.js';
import { fork } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { withOrigin, type OpsContext } from '../../src/ops/context.js';
import { readLog } from '../../src/ops/log.js';
import { promote } from '../../src/ops/promote.js';
import { setProtected } from '../../src/ops/protect.js';
import { query } from '../../src/ops/query.js';
import { reap } from '../../src/ops/reap.js';
import { rollback } from '../../src/ops/rollback.js';
import { touch } from '../../src/ops/touch.js';
import { parseDuration } from '../../src/core/duration.js';
import { LOG_TAIL_RECORDS, type LogRecord } from '../../src/core/history.js';
import { parseDataKey, parseLogKey } from '../../src/core/keys.js';
import type { Backend } from '../../src/store/backend.js';
import { exportDump, rejectsCode, type TestStore, type TestStoreOptions } from './harness.js';
import { runSql } from './sqlite-cli.js';

/** Opens a fresh store of the kind under test. */
export type OpenStore = (opts?: TestStoreOptions) => Promise<TestStore>;

const HOUR_MS = 3_600_000;

/** Writes one row into the branch's checkout and checkpoints it (unnamed unless `name`); returns the new txid. */
async function write(ctx: OpsContext, branch: string, value: number, name?: string): Promise<number> {
  const { path } = await checkout(ctx, { db: 'app', branch });
  runSql(path, `CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES (${value});`);
  return (await checkpoint(ctx, { db: 'app', branch }, name)).txid;
}

/** The ops of a branch's log, oldest first. */
async function ops(ctx: OpsContext, branch: string): Promise<string[]> {
  return (await readLog(ctx, { db: 'app', branch }, { limit: 0 })).records.map((r) => r.op);
}

/** Rows of table t in a target's durable state. */
async function rows(ts: TestStore, ctx: OpsContext, branch: string, at?: string): Promise<string> {
  return exportDump(ts, { db: 'app', branch, ...(at !== undefined ? { checkpoint: at } : {}) }, ctx);
}

/** Every at-rest verb appends one record naming who asked and through what; a destroyed branch's log says who did it. */
export async function recordsEveryVerb(open: OpenStore): Promise<void> {
  const ts = await open();
  try {
    const human = withOrigin(ts.ctx, { actor: 'human', surface: 'cli' });
    const agent = withOrigin(ts.ctx, { actor: 'agent', surface: 'mcp:offshoot_fork', meta: { run: 'r-7' } });
    await create(human, 'app');
    await fork(agent, { db: 'app', branch: 'main' }, 'a1', { ttl: { kind: 'set', ttl: parseDuration('1h') } });
    await write(agent, 'a1', 1, 'one');
    await write(agent, 'a1', 2);
    await touch(agent, { db: 'app', branch: 'a1' }, { kind: 'set', ttl: parseDuration('2h') });
    await setProtected(human, { db: 'app', branch: 'a1' }, true);
    await setProtected(human, { db: 'app', branch: 'a1' }, false);
    await rollback(human, { db: 'app', branch: 'a1' }, 'one');
    await compact(human, { db: 'app', branch: 'a1' });
    await fork(human, { db: 'app', branch: 'main' }, 'a2');
    await promote(human, { db: 'app', branch: 'a1' }, 'a2');
    assert.deepEqual(await ops(ts.ctx, 'main'), ['create']);
    assert.deepEqual(await ops(ts.ctx, 'a1'), [
      'fork',
      'checkpoint',
      'flush',
      'touch',
      'protect',
      'unprotect',
      'rollback',
      'compact',
    ]);
    assert.deepEqual(await ops(ts.ctx, 'a2'), ['fork', 'promote']);
    assert.deepEqual(await ops(ts.ctx, 'a1-pre-rollback'), ['fork']);
    const a1 = (await readLog(ts.ctx, { db: 'app', branch: 'a1' })).records;
    const [forked, named, flushed] = a1 as [LogRecord, LogRecord, LogRecord];
    assert.equal(forked.actor, 'agent');
    assert.equal(forked.surface, 'mcp:offshoot_fork');
    assert.deepEqual(forked.meta, { run: 'r-7' });
    assert.equal(forked.from, 'app@main@1');
    assert.deepEqual([forked.txid_before, forked.txid_after], [0, 1]);
    assert.deepEqual([named.txid_before, named.txid_after, named.name], [1, 2, 'one']);
    assert.ok((flushed.pages ?? 0) > 0 && (flushed.bytes ?? 0) > 0, 'a flush says the pages and bytes it wrote');
    const rolled = a1.find((r) => r.op === 'rollback') as LogRecord;
    assert.deepEqual([rolled.actor, rolled.surface, rolled.txid_before, rolled.txid_after], ['human', 'cli', 3, 2]);
    assert.equal(rolled.undo, 'a1-pre-rollback');
    assert.equal((a1.find((r) => r.op === 'unprotect') as LogRecord).actor, 'human');

    // A reap by the daemon's janitor and a destroy by an agent: each ends its log, which stays readable.
    const janitor = withOrigin(ts.ctx, { actor: 'human', surface: 'janitor' });
    ts.clock.advance(3 * HOUR_MS);
    const reaped = await reap(janitor);
    assert.ok(reaped.reaped.includes('app@a1'), JSON.stringify(reaped));
    const gone = await readLog(ts.ctx, { db: 'app', branch: 'a1' }, { limit: 0 });
    assert.equal(gone.live, false);
    assert.equal(gone.destroyed?.op, 'reap');
    assert.equal(gone.destroyed?.surface, 'janitor');
    assert.equal(gone.records.at(-1)?.op, 'reap');
    await destroy(agent, { db: 'app', branch: 'a2' });
    const a2 = await readLog(ts.ctx, { db: 'app', branch: 'a2' });
    assert.deepEqual(
      [a2.destroyed?.op, a2.destroyed?.actor, a2.destroyed?.surface, a2.destroyed?.meta],
      ['destroy', 'agent', 'mcp:offshoot_fork', { run: 'r-7' }],
    );
    // The name made again starts a log of its own; the destroyed one is listed as an earlier incarnation.
    await fork(human, { db: 'app', branch: 'main' }, 'a2');
    const again = await readLog(ts.ctx, { db: 'app', branch: 'a2' });
    assert.deepEqual(
      again.records.map((r) => [r.seq, r.op]),
      [[1, 'fork']],
    );
    assert.equal(again.earlier.length, 1);
    assert.notEqual(again.earlier[0]?.logId, again.logId);
  } finally {
    await ts.cleanup();
  }
}

/**
 * The tail spills into log objects past its bound, a reader merges them in order, and filters read only what they
 * need; every record is read once however the objects overlap.
 */
export async function spillsAndReads(open: OpenStore): Promise<void> {
  const ts = await open();
  try {
    const agent = withOrigin(ts.ctx, { actor: 'agent', surface: 'sdk:langgraph/langgraph-js' });
    await create(ts.ctx, 'app');
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'b');
    for (let i = 1; i <= 30; i++) {
      ts.clock.advance(60_000);
      await write(i % 3 === 0 ? agent : ts.ctx, 'b', i);
    }
    const { ref } = await ts.store.getRef('app', 'b');
    assert.ok((ref.log?.length ?? 0) <= LOG_TAIL_RECORDS, `the tail stays small: ${ref.log?.length}`);
    const objects = await ts.store.listLogObjects('app', 'b');
    assert.ok(objects.length >= 3, `spilled into ${objects.length} objects`);
    const all = await readLog(ts.ctx, { db: 'app', branch: 'b' }, { limit: 0 });
    assert.deepEqual(
      all.records.map((r) => r.seq),
      Array.from({ length: 31 }, (_, i) => i + 1),
    );
    assert.deepEqual(
      all.records.map((r) => r.txid_after),
      Array.from({ length: 31 }, (_, i) => i + 1),
    );
    const last5 = await readLog(ts.ctx, { db: 'app', branch: 'b' }, { limit: 5 });
    assert.deepEqual(
      last5.records.map((r) => r.seq),
      [27, 28, 29, 30, 31],
    );
    assert.equal(last5.truncated, true);
    const agents = await readLog(ts.ctx, { db: 'app', branch: 'b' }, { actor: 'agent', limit: 0 });
    assert.equal(agents.records.length, 10);
    assert.ok(agents.records.every((r) => r.actor === 'agent' && r.surface === 'sdk:langgraph/langgraph-js'));
    const since = new Date(ts.clock.now().getTime() - 5 * 60_000 + 1);
    const recent = await readLog(ts.ctx, { db: 'app', branch: 'b' }, { since, limit: 0 });
    assert.deepEqual(
      recent.records.map((r) => r.seq),
      [27, 28, 29, 30, 31],
    );
  } finally {
    await ts.cleanup();
  }
}

/** The fault a LoseSwapAfterSpill backend injects: armed by the test, counting the swaps it made lose. */
interface SwapFault {
  armed: boolean;
  lost: number;
}

/**
 * The real backend, except that once armed, the first compare-and-swap of a ref after a log object was written loses
 * to another writer's change of that ref (its generation moves first): a spill whose swap is lost.
 */
function loseSwapAfterSpill(inner: Backend, fault: SwapFault): Backend {
  let spilled = false;
  const put = async (...args: Parameters<Backend['put']>): Promise<string> => {
    const [key, , cond] = args;
    if (key.startsWith('log/')) {
      const etag = await inner.put(...args);
      if (fault.armed) spilled = true;
      return etag;
    }
    if (fault.armed && spilled && key.startsWith('refs/') && cond !== undefined && 'ifMatch' in cond) {
      fault.armed = false;
      spilled = false;
      fault.lost++;
      const cur = await inner.get(key);
      const moved = JSON.parse(cur.body.toString('utf8')) as { generation?: number };
      moved.generation = (moved.generation ?? 0) + 1;
      await inner.put(key, Buffer.from(JSON.stringify(moved)), { ifMatch: cur.etag });
    }
    return inner.put(...args);
  };
  return new Proxy(inner, {
    get: (target, prop, receiver) => {
      if (prop === 'put') return put;
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** A spill whose compare-and-swap is lost leaves a copy of committed records, which no reader ever shows twice. */
export async function lostSwapShowsNoDuplicate(open: OpenStore): Promise<void> {
  const fault: SwapFault = { armed: false, lost: 0 };
  const ts = await open({ wrap: (b) => loseSwapAfterSpill(b, fault) });
  try {
    await create(ts.ctx, 'app');
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'b');
    for (let i = 1; i < LOG_TAIL_RECORDS; i++) await touch(ts.ctx, { db: 'app', branch: 'b' });
    fault.armed = true;
    // The ninth record spills the eight before it; the swap that trims them is lost, and touch retries it.
    await touch(ts.ctx, { db: 'app', branch: 'b' });
    await touch(ts.ctx, { db: 'app', branch: 'b' });
    assert.equal(fault.lost, 1, 'the swap after the spill was lost once');
    const log = await readLog(ts.ctx, { db: 'app', branch: 'b' }, { limit: 0 });
    assert.deepEqual(
      log.records.map((r) => r.seq),
      Array.from({ length: LOG_TAIL_RECORDS + 2 }, (_, i) => i + 1),
    );
    const spilled = (await ts.store.listLogObjects('app', 'b')).map((o) => [o.first, o.last]);
    assert.ok(spilled.length >= 1, JSON.stringify(spilled));
  } finally {
    await ts.cleanup();
  }
}

/** `@tx:N` and `@at:T` on every verb that takes a target: export, read-only checkout, fork, rollback, diff, query. */
export async function momentsOnEveryVerb(open: OpenStore): Promise<void> {
  const ts = await open();
  try {
    await create(ts.ctx, 'app');
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'b');
    const times: string[] = [];
    for (let i = 1; i <= 12; i++) {
      ts.clock.advance(60_000);
      await write(ts.ctx, 'b', i);
      times.push(ts.clock.now().toISOString());
    }
    const at5 = `at:${new Date(Date.parse(times[4] as string) + 30_000).toISOString()}`;
    // txid 6 holds rows 1..5 (the fork is txid 1); `at:` half a minute after the fifth write is the same state.
    const want = await rows(ts, ts.ctx, 'b', 'tx:6');
    assert.match(want, /VALUES\(5\)/);
    assert.doesNotMatch(want, /VALUES\(6\)/);
    assert.equal(await rows(ts, ts.ctx, 'b', at5), want);
    const ro = await checkoutAt(ts.ctx, { db: 'app', branch: 'b' }, at5);
    const q = await query(ts.ctx, { db: 'app', branch: 'b' }, 'SELECT count(*) FROM t', { at: 'tx:6' });
    assert.deepEqual(q.rows, [[5]]);
    assert.ok(ro.path.endsWith('b@tx:6.db'), ro.path);
    await fork(ts.ctx, { db: 'app', branch: 'b' }, 'c', { at: 'tx:4' });
    assert.match(await rows(ts, ts.ctx, 'c'), /VALUES\(3\)/);
    assert.doesNotMatch(await rows(ts, ts.ctx, 'c'), /VALUES\(4\)/);
    const d = await diff(
      ts.ctx,
      { db: 'app', branch: 'b', checkpoint: 'tx:6' },
      { db: 'app', branch: 'b', checkpoint: at5 },
    );
    assert.ok(
      d.tables.every((x) => x.status === 'same'),
      JSON.stringify(d.tables),
    );
    // A bad hour undone by time: roll back to the moment before it, then reach the abandoned states again.
    await rollback(ts.ctx, { db: 'app', branch: 'b' }, at5);
    assert.equal(await rows(ts, ts.ctx, 'b'), want);
    assert.match(await rows(ts, ts.ctx, 'b', 'tx:10'), /VALUES\(9\)/, 'a txid left behind is still addressable');
    await write(ts.ctx, 'b', 100);
    assert.match(await rows(ts, ts.ctx, 'b', 'tx:7'), /VALUES\(100\)/, 'tx:7 is now the newest state of that number');
    await rejectsCode(rows(ts, ts.ctx, 'b', 'tx:99'), 'NOT_FOUND');
    await rejectsCode(rows(ts, ts.ctx, 'b', 'at:2019-01-01T00:00:00Z'), 'NOT_FOUND');
    await rejectsCode(rows(ts, ts.ctx, 'b', 'tx:x'), 'INVALID_ARGUMENT');
  } finally {
    await ts.cleanup();
  }
}

/**
 * The history window: GC keeps every state inside it through merges, compactions and rollbacks, and refuses, then
 * collects, what it left behind; a destroyed branch's log goes once its data and its window have.
 */
export async function windowHonouredByGc(open: OpenStore): Promise<void> {
  const ts = await open({ snapshotEvery: 4 });
  try {
    await create(ts.ctx, 'app');
    await config(ts.ctx, 'app', { history_window: '2h' });
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'b');
    for (let i = 1; i <= 20; i++) {
      ts.clock.advance(60_000);
      await write(ts.ctx, 'b', i);
    }
    const merged = (await ts.store.backend.listKeys('data/'))
      .map(parseDataKey)
      .filter((d) => d?.kind === 'segment' && d.minTxid < d.maxTxid);
    assert.ok(merged.length > 0, 'merges replaced members the head no longer reads');
    await compact(ts.ctx, { db: 'app', branch: 'b' });
    await rollback(ts.ctx, { db: 'app', branch: 'b' }, 'tx:3');
    const grace = parseDuration('0s');
    const forked = (await readLog(ts.ctx, { db: 'app', branch: 'b' }, { limit: 0 })).records[0] as LogRecord;
    const first = `data/${forked.lineage}/`;
    await runGc(ts.ctx, { grace });
    await runGc(ts.ctx, { grace });
    // Inside the window every state of the old lineages is still there.
    for (const tx of [2, 7, 15, 21])
      assert.match(await rows(ts, ts.ctx, 'b', `tx:${tx}`), new RegExp(`VALUES\\(${tx - 1}\\)`));
    assert.ok((await ts.store.backend.listKeys(first)).length > 0, 'the first lineage is kept for the window');
    ts.clock.advance(3 * HOUR_MS);
    await rejectsCode(rows(ts, ts.ctx, 'b', 'tx:15'), 'NOT_FOUND');
    await runGc(ts.ctx, { grace });
    await runGc(ts.ctx, { grace });
    // The head (rolled back to tx:3) still reads through the first lineage up to txid 3; above it, nothing is left.
    assert.deepEqual(
      (await ts.store.backend.listKeys(first)).filter((k) => (parseDataKey(k)?.maxTxid ?? 0) > 3),
      [],
      'past the window, what only it kept is collected',
    );
    // The current head, and the log of the live branch, survive any window.
    assert.match(await rows(ts, ts.ctx, 'b'), /VALUES\(2\)/);
    assert.ok((await readLog(ts.ctx, { db: 'app', branch: 'b' }, { limit: 0 })).records.length > 20);
    // A destroyed branch's log lasts while its window does, then goes with its data.
    await destroy(ts.ctx, { db: 'app', branch: 'b' }, {});
    await runGc(ts.ctx, { grace });
    assert.ok((await ts.store.backend.listKeys('log/app/b/')).length > 0, 'kept inside the window');
    ts.clock.advance(3 * HOUR_MS);
    await runGc(ts.ctx, { grace });
    await runGc(ts.ctx, { grace });
    await runGc(ts.ctx, { grace });
    assert.deepEqual(await ts.store.backend.listKeys('log/app/b/'), [], 'collected with its data, past its window');
    await rejectsCode(readLog(ts.ctx, { db: 'app', branch: 'b' }), 'NOT_FOUND');
    assert.ok((await ts.store.backend.listKeys('log/')).every((k) => parseLogKey(k)?.branch !== 'b'));
  } finally {
    await ts.cleanup();
  }
}
