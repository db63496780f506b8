// A store's layout changes only when its owner says so: a store the earlier implementation wrote (its own bytes, in
// test/vectors/stores, copied) stays at its layout under a long daemon session and at-rest checkpoints, its chains
// bounded by snapshots as the earlier implementation bounded them, until `offshoot upgrade`; from then on the running
// daemon and the CLI write merged segments. Checked by the manifest, the keys in the store and every export.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseDataKey } from '../../src/core/keys.js';
import { parseTarget } from '../../src/core/target.js';
import { exportTo } from '../../src/ops/export.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { dumpHash, run } from '../e2e/cli-harness.js';
import { query, runSql } from '../ops/sqlite-cli.js';
import { copyStoreDir, startDaemon, until, type DaemonProcess, type StoreDir } from './daemon-process.js';

const VECTORS = fileURLToPath(new URL('../vectors/stores/', import.meta.url));
const EXPECTED = JSON.parse(readFileSync(path.join(VECTORS, 'expected.json'), 'utf8')) as Record<
  string,
  { dump_sha256: string; rows: Record<string, number> }
>;
// The earlier implementation's default snapshot cadence: its chains never held more members.
const EARLIER_CHAIN_BOUND = 16;
const FLUSHES = 300;
const AT_REST = 30;

/** Every data key of a local store, relative to its root. */
function dataKeys(store: string): string[] {
  return readdirSync(path.join(store, 'data'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ltx'))
    .map((f) => `data/${f}`);
}

/** The merged segments in a store: segment-{max}-{min} with min < max, which only layout 3 allows. */
function mergedKeys(store: string): string[] {
  return dataKeys(store).filter((k) => {
    const d = parseDataKey(k);
    return d !== undefined && d.kind === 'segment' && d.minTxid < d.maxTxid;
  });
}

function manifestOf(store: string): { layout_version: number; created_at: string } {
  return JSON.parse(readFileSync(path.join(store, 'offshoot.json'), 'utf8'));
}

/** Exports target through the CLI and checks it against the earlier implementation's own export of it. */
async function assertExportAsExpected(s: StoreDir, vector: string, target: string): Promise<void> {
  const want = EXPECTED[`${vector}/${target}`];
  assert.ok(want, `expected.json has ${vector}/${target}`);
  const out = s.file(`export-${target.replace(/@/g, '-')}.db`);
  const r = s.cli(['export', target, out, '--force']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await dumpHash(out), want.dump_sha256, `${target} exports as the earlier implementation exported it`);
  for (const [table, rows] of Object.entries(want.rows))
    assert.equal(Number(query(out, `SELECT count(*) FROM "${table}"`)), rows, `${target}: rows of ${table}`);
}

/** The members of the chain at a branch's head, read in-process from the store. */
async function headChainLength(s: StoreDir, db: string, branch: string): Promise<number> {
  const store = await Store.open(parseStoreSpec(s.store), { probe: false });
  try {
    const { ref } = await store.getRef(db, branch);
    return (await new ChainResolver(store).resolve(ref.lineage, ref.head_txid)).members.length;
  } finally {
    await store.close();
  }
}

describe("the earlier implementation's stores, as it left them", () => {
  test('every branch and checkpoint exports as it exported them, and reading writes nothing', async () => {
    for (const vector of ['linear', 'branches', 'daemon']) {
      const s = copyStoreDir(path.join(VECTORS, vector));
      try {
        const before = readFileSync(path.join(s.store, 'offshoot.json'), 'utf8');
        const store = await Store.open(parseStoreSpec(s.store), { probe: false });
        try {
          const ctx = makeContext(store, s.store, { warn: () => undefined });
          const targets = Object.keys(EXPECTED).filter((k) => k.startsWith(`${vector}/`));
          assert.ok(targets.length >= 5, `${vector}: ${targets.length} targets`);
          for (const key of targets) {
            const want = EXPECTED[key] as { dump_sha256: string };
            const out = s.file('export.db');
            await exportTo(ctx, parseTarget(key.slice(vector.length + 1), { allowCheckpoint: true }), out, {
              force: true,
            });
            assert.equal(await dumpHash(out), want.dump_sha256, key);
          }
        } finally {
          await store.close();
        }
        assert.equal(readFileSync(path.join(s.store, 'offshoot.json'), 'utf8'), before);
        assert.deepEqual(dataKeys(s.store).sort(), dataKeys(path.join(VECTORS, vector)).sort(), 'no object written');
      } finally {
        s.cleanup();
      }
    }
  });
});

/** Every target of the daemon vector that neither the session nor the at-rest checkpoints move. */
const UNMOVED = ['live@main@init', 'live@main@f3', 'live@main@f6', 'live@main@f9', 'live@main@f12', 'live@side@fork'];

describe('a store the earlier implementation wrote, under a long daemon session', () => {
  let s: StoreDir;
  let manifestBytes: string;

  before(() => {
    s = copyStoreDir(path.join(VECTORS, 'daemon'));
    manifestBytes = readFileSync(path.join(s.store, 'offshoot.json'), 'utf8');
    assert.equal(manifestOf(s.store).layout_version, 2, 'the vector is a layout-2 store');
  });
  after(() => s.cleanup());

  test(`${FLUSHES} flushes and ${AT_REST} at-rest checkpoints keep its layout; chains stay bounded by snapshots`, async () => {
    const d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '100ms', '-gc-grace', '0s']);
    let mainDump = '';
    let sideDump = '';
    try {
      const opened = await d.request({ op: 'open', db: 'live', branch: 'main' });
      assert.equal(opened.ok, true, JSON.stringify(opened));
      const main = opened.checkout ?? '';
      const co = s.cli(['checkout', 'live@side']);
      assert.equal(co.code, 0, co.stderr);
      const side = co.stdout.trim();
      runSql(main, 'CREATE TABLE probe(id INTEGER PRIMARY KEY, v BLOB);');
      runSql(side, 'CREATE TABLE side_probe(id INTEGER PRIMARY KEY, v BLOB);');
      for (let i = 0; i < FLUSHES; i++) {
        runSql(
          main,
          `INSERT INTO probe(v) VALUES (randomblob(300)); UPDATE probe SET v = randomblob(40) WHERE id = ${1 + (i % 7)};`,
        );
        const f = await d.request({
          op: 'flush',
          db: 'live',
          branch: 'main',
          ...(i % 50 === 49 ? { name: `n${i}` } : {}),
        });
        assert.equal(f.ok, true, JSON.stringify(f));
        if (i % (FLUSHES / AT_REST) === 0) {
          runSql(side, `INSERT INTO side_probe(v) VALUES (randomblob(200));`);
          const c = s.cli(['checkpoint', 'live@side', `s${i}`]);
          assert.equal(c.code, 0, c.stderr);
        }
      }
      assert.deepEqual(await d.request({ op: 'close', db: 'live', branch: 'main' }), { ok: true });
      mainDump = await dumpHash(main);
      sideDump = await dumpHash(side);
    } finally {
      await d.stop();
    }
    assert.equal(
      readFileSync(path.join(s.store, 'offshoot.json'), 'utf8'),
      manifestBytes,
      'the manifest is the one the earlier implementation wrote, byte for byte',
    );
    assert.deepEqual(mergedKeys(s.store), [], 'no merged segment was written');
    const vectorKeys = new Set(dataKeys(path.join(VECTORS, 'daemon')));
    const snapshots = dataKeys(s.store).filter((k) => !vectorKeys.has(k) && parseDataKey(k)?.kind === 'snapshot');
    assert.ok(snapshots.length >= 2, `the chains were bounded by snapshots: ${snapshots.join(' ')}`);
    for (const branch of ['main', 'side']) {
      const n = await headChainLength(s, 'live', branch);
      assert.ok(n <= EARLIER_CHAIN_BOUND, `live@${branch}'s chain has ${n} members`);
    }
    for (const t of UNMOVED) await assertExportAsExpected(s, 'daemon', t);
    for (const [t, want] of [
      ['live@main', mainDump],
      ['live@side', sideDump],
    ] as const) {
      const out = s.file(`head-${t.replace('@', '-')}.db`);
      assert.equal(s.cli(['export', t, out]).code, 0);
      assert.equal(await dumpHash(out), want, `${t} exports as its checkout was last written`);
    }
  });
});

describe('offshoot upgrade, with a daemon serving the store', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = copyStoreDir(path.join(VECTORS, 'daemon'));
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '100ms', '-gc-grace', '0s']);
  });
  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('moves the store to layout 3 once; the running session and the CLI merge from then on', async () => {
    const opened = await d.request({ op: 'open', db: 'live', branch: 'main' });
    assert.equal(opened.ok, true, JSON.stringify(opened));
    const main = opened.checkout ?? '';
    runSql(main, 'CREATE TABLE probe(id INTEGER PRIMARY KEY, v BLOB);');
    const flush = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        runSql(main, 'INSERT INTO probe(v) VALUES (randomblob(300));');
        const f = await d.request({ op: 'flush', db: 'live', branch: 'main' });
        assert.equal(f.ok, true, JSON.stringify(f));
      }
    };
    await flush(10);
    assert.deepEqual(mergedKeys(s.store), [], 'no merge before the upgrade');

    const up = s.cli(['upgrade', '--json']);
    assert.equal(up.code, 0, up.stderr);
    const doc = JSON.parse(up.stdout);
    assert.deepEqual(
      { store: doc.store, from: doc.from, to: doc.to, upgraded: doc.upgraded, version: doc.layout.version },
      { store: s.store, from: 2, to: 3, upgraded: true, version: 3 },
    );
    assert.equal(doc.layout.upgrade, undefined, 'nothing more to buy at the newest layout');
    assert.equal(manifestOf(s.store).layout_version, 3);
    assert.equal(manifestOf(s.store).created_at, '2026-12-01T08:31:15Z', 'the rest of the manifest is kept');

    // The session re-reads the layout before its next compaction and merges from then on.
    await flush(10);
    await until(() => mergedKeys(s.store).length > 0, 'the session to write a merged segment');
    assert.deepEqual(await d.request({ op: 'close', db: 'live', branch: 'main' }), { ok: true });
    const mainDump = await dumpHash(main);

    // At rest, the CLI's checkpoint merges the branch it wrote.
    const co = s.cli(['checkout', 'live@side']);
    assert.equal(co.code, 0, co.stderr);
    const side = co.stdout.trim();
    const sideLineage = JSON.parse(readFileSync(path.join(s.store, 'refs', 'live', 'side'), 'utf8')).lineage;
    for (let i = 0; i < 10; i++) {
      runSql(side, `CREATE TABLE IF NOT EXISTS side_probe(v); INSERT INTO side_probe VALUES (randomblob(200));`);
      assert.equal(s.cli(['checkpoint', 'live@side', `c${i}`]).code, 0);
    }
    assert.ok(
      mergedKeys(s.store).some((k) => k.startsWith(`data/${sideLineage}/`)),
      'an at-rest checkpoint merged its chain',
    );

    const again = s.cli(['upgrade']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^store at .* is already at layout 3 \(merged segments/);
    const down = s.cli(['upgrade', '--to', '2']);
    assert.equal(down.code, 2, 'a downgrade is refused as an invalid argument');
    assert.match(
      down.stderr,
      /^offshoot: store .* is at layout 3; a layout is never lowered to 2 \(to give a database .*'offshoot init --layout 2'/,
    );
    assert.equal(manifestOf(s.store).layout_version, 3, 'and the store is left as it was');

    for (const t of UNMOVED) await assertExportAsExpected(s, 'daemon', t);
    for (const [t, want] of [
      ['live@main', mainDump],
      ['live@side', await dumpHash(side)],
    ] as const) {
      const out = s.file(`head-${t.replace('@', '-')}.db`);
      assert.equal(s.cli(['export', t, out]).code, 0);
      assert.equal(await dumpHash(out), want, `${t} exports as its checkout was last written`);
    }
  });
});

describe('init --layout, status and the layouts this build refuses', () => {
  let s: StoreDir;
  before(() => {
    s = copyStoreDir(path.join(VECTORS, 'linear'));
  });
  after(() => s.cleanup());

  test('a new store is at layout 3 unless --layout says otherwise', () => {
    for (const [flags, want] of [
      [[], 3],
      [['--layout', '1'], 1],
      [['--layout', '2'], 2],
      [['--layout', '3'], 3],
    ] as const) {
      const store = s.file(`new-${want}-${flags.length}`);
      const r = run(['-store', store, 'init', ...flags, '--json']);
      assert.equal(JSON.parse(r.stdout).layout_version, want);
      assert.equal(manifestOf(store).layout_version, want);
    }
    for (const bad of ['0', '4', 'three']) {
      const r = run(['-store', s.file(`bad-${bad}`), 'init', '--layout', bad], { expectCode: 2 });
      assert.match(
        r.stderr,
        /--layout .* is not a layout this build writes \(pass --layout 1, 2 or 3, or leave it out for 3\)$/m,
      );
    }
  });

  test('upgrade raises a layout-1 store step by step, idempotently, and refuses a layout this build does not write', () => {
    const store = s.file('steps');
    run(['-store', store, 'init', '--layout', '1']);
    const step = (args: string[]) => JSON.parse(run(['-store', store, 'upgrade', ...args, '--json']).stdout);
    assert.deepEqual(
      [step(['--to', '2']), step([]), step([])].map((r) => [r.from, r.to, r.upgraded]),
      [
        [1, 2, true],
        [2, 3, true],
        [3, 3, false],
      ],
    );
    assert.match(
      run(['-store', store, 'upgrade', '--to', '4'], { expectCode: 2 }).stderr,
      /layout 4 is not one this build writes/,
    );
    assert.match(
      run(['-store', store, 'upgrade', '--to', 'x'], { expectCode: 2 }).stderr,
      /--to "x" is not a layout number/,
    );
    assert.equal(manifestOf(store).layout_version, 3);
  });

  test("status shows the store's layout and what upgrading buys", () => {
    const text = s.cli(['status']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /\nro-cache: [^\n]*\n$/, 'stdout ends as the earlier implementation’s did');
    assert.match(
      text.stderr,
      /^offshoot: note: store layout 2 \(copy-on-write forks, chains bounded by snapshots; the earlier implementation reads the store\)\. offshoot upgrade: merged segments/m,
    );
    assert.equal(s.cli(['status', '--quiet']).stderr, '', '--quiet leaves the note out');
    const json = s.cli(['status', 'app', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const layout = JSON.parse(json.stdout).layout;
    assert.equal(layout.version, 2);
    assert.equal(layout.newest, 3);
    assert.match(layout.upgrade, /^offshoot upgrade: /);
  });

  test('a layout newer than this build is refused as before', () => {
    const store = s.file('too-new');
    run(['-store', store, 'init']);
    writeFileSync(path.join(store, 'offshoot.json'), '{"layout_version":4,"created_at":"2027-01-01T00:00:00Z"}');
    for (const args of [['status'], ['upgrade']]) {
      const r = run(['-store', store, ...args], { expectCode: 7 });
      assert.match(r.stderr, /layout version 4 is newer than this binary supports \(3\)/);
    }
  });
});
