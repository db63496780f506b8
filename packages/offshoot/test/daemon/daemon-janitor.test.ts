import assert from 'node:assert/strict';
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { MAX_CHAIN_MEMBERS } from '../../src/ops/helpers/chain/chain-writer.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { roCacheEntries } from '../../src/ops/helpers/checkout/ro-cache-entries.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import type { EventEnvelope } from '../../src/protocol/wire.js';
import { holdSqlite3 } from '../e2e/cli-harness.js';
import { dump, runSql } from '../ops/sqlite-cli.js';
import { LineClient, makeStoreDir, startDaemon, until, type DaemonProcess, type StoreDir } from './daemon-process.js';

const TOKEN = 'janitor-test-token-0123456789';

function dataKeys(store: string): Set<string> {
  return new Set(
    readdirSync(path.join(store, 'data'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ltx')),
  );
}

describe('janitor: reap and gc', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  let metricsUrl = '';
  const metric = async (line: RegExp): Promise<number> => {
    const text = await (await fetch(metricsUrl, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    return Number(line.exec(text)?.[1] ?? NaN);
  };

  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    d = await startDaemon(s, ['-reap-every', '200ms', '-gc-grace', '0s', '-flush-every', '0', '-http', '127.0.0.1:0'], {
      OFFSHOOT_TOKEN: TOKEN,
    });
    await until(() => /listening on /.test(d.stderr()), 'the http listener');
    metricsUrl = `http://${/listening on (\S+)/.exec(d.stderr())?.[1]}/metrics`;
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('an expired fork is reaped, announced and counted', async () => {
    const sub = await LineClient.connect(d.sock);
    try {
      assert.deepEqual(await sub.request({ op: 'subscribe' }), { ok: true });
      const fk = await d.request({ op: 'fork', db: 'app', name: 'short', ttl: '1s' });
      assert.equal(fk.ok, true, JSON.stringify(fk));
      const reaped = (await sub.eventsUntil((e) => e.type === 'reaped')).pop() as EventEnvelope;
      assert.equal(reaped.db, 'app');
      assert.equal(reaped.branch, 'short');
    } finally {
      sub.close();
    }
    const names = (await d.request({ op: 'branches', db: 'app' })).branches?.map((b) => b.branch);
    assert.deepEqual(names, ['main']);
    assert.match(d.stderr(), /^offshoot: janitor: reaped app@short$/m);
    assert.equal(await metric(/^offshoot_reap_total (\d+)$/m), 1);
    assert.ok((await metric(/^offshoot_janitor_runs_total\{result="ok"\} (\d+)$/m)) >= 1);
  });

  test('objects left unreachable by a destroy are tombstoned, then deleted after the grace period', async () => {
    assert.equal((await d.request({ op: 'fork', db: 'app', name: 'scratch' })).ok, true);
    const before = dataKeys(s.store);
    const opened = await d.request({ op: 'open', db: 'app', branch: 'scratch' });
    runSql(opened.checkout ?? '', 'CREATE TABLE big(x); INSERT INTO big VALUES (randomblob(20000));');
    assert.equal((await d.request({ op: 'flush', db: 'app', branch: 'scratch' })).ok, true);
    assert.deepEqual(await d.request({ op: 'close', db: 'app', branch: 'scratch' }), { ok: true });
    const written = [...dataKeys(s.store)].filter((k) => !before.has(k));
    assert.ok(written.length >= 1, 'the session wrote objects of its own');
    assert.deepEqual(await d.request({ op: 'destroy', db: 'app', branch: 'scratch' }), {
      ok: true,
      result: { removed_checkout: true },
    });
    await until(
      () => written.every((k) => !existsSync(path.join(s.store, 'data', k))),
      'the janitor to delete the orphaned objects',
    );
    assert.ok((await metric(/^offshoot_gc_deleted_total (\d+)$/m)) >= written.length);
    assert.ok((await metric(/^offshoot_gc_tombstoned_total (\d+)$/m)) >= written.length);
    assert.equal(await metric(/^offshoot_gc_errors_total (\d+)$/m), 0);
    const out = s.file('main.db');
    assert.equal((await d.request({ op: 'export', db: 'app', path: out })).ok, true, 'the live branch is intact');
  });
});

describe('janitor: read-only cache budget', () => {
  let s: StoreDir;

  before(() => {
    s = makeStoreDir();
    for (const args of [
      ['create', 'app'],
      ['checkout', 'app'],
    ])
      assert.equal(s.cli(args).code, 0);
    const co = path.join(s.store, 'checkouts', 'app', 'main.db');
    runSql(co, 'CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(9000));');
    assert.equal(s.cli(['checkpoint', 'app', 'c1']).code, 0);
    runSql(co, 'INSERT INTO t VALUES (randomblob(9000));');
    assert.equal(s.cli(['checkpoint', 'app', 'c2']).code, 0);
    for (const cp of ['c1', 'c2']) assert.equal(s.cli(['checkout', 'app', '--at', cp, '--read-only']).code, 0);
  });

  after(() => s.cleanup());

  test('evicts least-recently-used checkouts-ro entries down to the budget and never touches checkouts/', async () => {
    const writable = path.join(s.store, 'checkouts', 'app', 'main.db');
    const writableDump = dump(writable);
    const keep = path.join(s.store, 'checkouts-ro', 'app', 'main@c2.db');
    const entries = await roCacheEntries(s.store);
    assert.ok(entries.length >= 3, `several cache entries to choose from: ${entries.map((e) => e.path).join(' ')}`);
    // Ages by hand: c2 was used last, everything else earlier, one second apart.
    const others = entries.filter((e) => e.path !== keep);
    const base = Date.now() / 1000 - 3600;
    others.forEach((e, i) => {
      utimesSync(e.path, base + i, base + i);
      if (existsSync(`${e.path}.last-used`)) utimesSync(`${e.path}.last-used`, base + i, base + i);
    });
    const budget = entries.find((e) => e.path === keep)?.bytes ?? 0;
    assert.ok(budget > 0);

    const d = await startDaemon(s, ['-reap-every', '200ms', '-ro-cache-budget', String(budget)]);
    try {
      await until(async () => (await roCacheEntries(s.store)).length === 1, 'the cache to shrink to the budget');
      assert.deepEqual(
        (await roCacheEntries(s.store)).map((e) => e.path),
        [keep],
      );
      const evictions = (): number =>
        [...d.stderr().matchAll(/^offshoot: janitor: ro-cache: evicted \S+ \S+ \(\d+ bytes\)$/gm)].length;
      await until(() => evictions() >= others.length, 'one log line per eviction');
      assert.equal(evictions(), others.length, d.stderr());
      assert.equal(dump(writable), writableDump, 'the writable checkout is untouched');
      assert.ok(existsSync(`${writable}.sum`));

      // Using c1 again makes c2 the least recently used entry: the next pass evicts it and says so.
      const sub = await LineClient.connect(d.sock);
      try {
        assert.deepEqual(await sub.request({ op: 'subscribe' }), { ok: true });
        const again = await d.request({ op: 'checkout-at', db: 'app', name: 'c1' });
        assert.equal(again.ok, true, JSON.stringify(again));
        const ev = (
          await sub.eventsUntil((e) => e.type === 'evicted' && e.detail?.checkpoint === 'c2')
        ).pop() as EventEnvelope;
        assert.equal(ev.db, 'app');
        assert.equal(ev.branch, 'main');
        assert.equal(ev.detail?.bytes, budget);
      } finally {
        sub.close();
      }
      await until(async () => !existsSync(keep), 'c2 to be evicted');
    } finally {
      await d.stop();
    }
  });
});

describe('janitor: merges chains written at rest', () => {
  let s: StoreDir;
  after(() => s.cleanup());

  test('a chain grown past its soft bound by at-rest writes is merged back, losing nothing', async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['upgrade']).code, 0, 'merged segments need layout 3');
    const spec = parseStoreSpec(s.store);
    const store = await Store.open(spec);
    const chainOf = async (): Promise<string[]> => {
      const { ref } = await store.getRef('app', 'long');
      return (await new ChainResolver(store).resolve(ref.lineage, ref.head_txid)).members.map((m) => m.key);
    };
    let d: DaemonProcess | undefined;
    try {
      const ctx = makeContext(store, s.store, { warn: () => undefined });
      await create(ctx, 'app');
      await fork(ctx, { db: 'app', branch: 'main' }, 'long');
      const co = await checkout(ctx, { db: 'app', branch: 'long' });
      runSql(co.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
      // The library's checkpoint leaves merging to whoever runs after it (the CLI, the janitor).
      for (let i = 0; i < MAX_CHAIN_MEMBERS - 1; i++) {
        runSql(co.path, `INSERT INTO t(v) VALUES ('row ${i}');`);
        await checkpoint(ctx, { db: 'app', branch: 'long' }, `c${i}`);
      }
      assert.equal((await chainOf()).length, MAX_CHAIN_MEMBERS);
      const want = dump(co.path);
      d = await startDaemon(s, ['-reap-every', '200ms', '-flush-every', '0']);
      await until(async () => (await chainOf()).length <= MAX_CHAIN_MEMBERS - 2, 'the janitor to merge the chain');
      const daemon = d;
      await until(() => /^offshoot: janitor: merge: app@long: \d+ members into \S+$/m.test(daemon.stderr()), 'its log');
      const out = s.file('long.db');
      assert.equal((await d.request({ op: 'export', db: 'app', branch: 'long', path: out })).ok, true);
      assert.equal(dump(out), want);
      const first = s.file('c0.db');
      assert.equal(s.cli(['export', 'app@long@c0', first]).code, 0);
      assert.equal(dump(first).includes("'row 0'"), true, 'a checkpoint inside the merged span still reads');
    } finally {
      await d?.stop();
      await store.close();
    }
  });
});

describe('janitor: a checkout holding work postpones its reap', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  before(async () => {
    s = makeStoreDir();
    for (const args of [
      ['create', 'app'],
      ['checkout', 'app'],
      ['fork', 'app', 'work'],
      ['fork', 'app', 'agent'],
    ])
      assert.equal(s.cli(args).code, 0);
    d = await startDaemon(s, ['-reap-every', '200ms', '-flush-every', '0']);
  });
  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('writes under an open connection are not reaped; checkpointed and due again, the branch goes', async () => {
    const co = s.cli(['checkout', 'app@work']).stdout.trim();
    const app = await holdSqlite3(co, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('a second ago');");
    try {
      assert.equal(s.cli(['touch', 'app@work', '--ttl', '1ns']).code, 0);
      await until(
        () =>
          /^offshoot: janitor: reap: postponed app@work: its checkout holds writes no checkpoint has$/m.test(
            d.stderr(),
          ),
        'the janitor to postpone the reap',
      );
      const listed = (await d.request({ op: 'branches', db: 'app' })).branches?.find((b) => b.branch === 'work');
      assert.equal(listed?.ttl_remaining, 'expired');
      assert.equal(listed?.reap_postponed, 'uncheckpointed_writes');
      await app.run("INSERT INTO t VALUES ('later');");
    } finally {
      await app.close();
    }
    // A TTL of 1ns expires at the checkpoint itself: a longer one keeps the branch while its content is checked.
    assert.equal(s.cli(['touch', 'app@work', '--ttl', '1h']).code, 0);
    assert.equal(s.cli(['checkpoint', 'app@work', 'kept']).code, 0);
    const out = s.file('work.db');
    const exported = s.cli(['export', 'app@work@kept', out]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(dump(out), /'a second ago'/);
    assert.match(dump(out), /'later'/);
    assert.equal(s.cli(['touch', 'app@work', '--ttl', '1ns']).code, 0);
    await until(() => /^offshoot: janitor: reaped app@work$/m.test(d.stderr()), 'the janitor to reap it once settled');
    assert.equal(
      [...d.stderr().matchAll(/janitor: reap: postponed app@work/g)].length,
      1,
      'a postponement is logged once, not every pass',
    );
  });

  test('a destroy through the daemon says what it discards, and an agent is refused it without force', async () => {
    const co = s.cli(['checkout', 'app@agent']).stdout.trim();
    runSql(co, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('unsaved');");
    const refused = await d.request({ op: 'destroy', db: 'app', branch: 'agent', actor: 'agent' });
    assert.equal(refused.ok, false);
    assert.equal(refused.code, 'PROTECTED');
    assert.match(refused.error ?? '', /holds writes no checkpoint has/);
    assert.match(dump(co), /'unsaved'/);
    const r = await d.request({ op: 'destroy', db: 'app', branch: 'agent' });
    assert.equal(r.ok, true, JSON.stringify(r));
    const result = r.result as { removed_checkout: boolean; discarded?: { reason: string; last_write: string } };
    assert.equal(result.removed_checkout, true);
    assert.equal(result.discarded?.reason, 'uncheckpointed_writes');
    assert.match(r.warnings?.join('\n') ?? '', /discarded the writes no checkpoint had in the checkout of app@agent/);
  });
});
