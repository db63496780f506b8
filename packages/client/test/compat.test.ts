import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import * as earlier from '@offshoot-db/client';
import * as earlierKit from '@offshoot-db/client/testkit';
import type { Branch, DestroyOptions, OffshootEvent, PromoteOptions } from '@offshoot-db/client';
import type { DaemonHandle, ForkedSession, SeedHandle } from '@offshoot-db/client/testkit';
import * as client from '@offshoot/client';
import { connect, findOffshootBinary, isOffshootError, OffshootError } from '@offshoot-db/client';
import * as kit from '@offshoot/client/testkit';
import { dump, forkPerTest, seedOnce, startDaemon } from '@offshoot-db/client/testkit';

const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = BIN;

function childExit(args: string[]): Promise<{ code: number | null; out: string }> {
  const fixture = fileURLToPath(new URL('./fixtures/last-test.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    // A process that hangs after its last test never exits: fail instead of waiting forever.
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the test process did not exit by itself: ${out}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, out });
    });
  });
}

test('@offshoot-db/client and /testkit export the same values as @offshoot/client', () => {
  assert.deepEqual(Object.keys(earlier).sort(), Object.keys(client).sort());
  assert.deepEqual(Object.keys(earlierKit).sort(), Object.keys(kit).sort());
  assert.equal(earlier.connect, client.connect);
  assert.equal(earlier.OffshootError, client.OffshootError);
  assert.equal(earlierKit.forkPerTest, kit.forkPerTest);
  assert.equal(earlierKit.startDaemon, kit.startDaemon);
  // The earlier type names compile against this package.
  const opts: DestroyOptions & PromoteOptions = { force: true };
  const names: (keyof Branch)[] = ['state', 'checkpoints_v2'];
  const ev: Pick<OffshootEvent, 'v'> = { v: 1 };
  assert.deepEqual([opts.force, names.length, ev.v], [true, 2, 1]);
});

test('new OffshootError(message), the earlier form, still works and carries a code', () => {
  const e = new OffshootError('boom');
  assert.equal(e.message, 'boom');
  assert.equal(e.code, 'INTERNAL');
  assert.ok(e instanceof Error && isOffshootError(e));
});

test('a bad OFFSHOOT_BIN is named with the earlier words: "does not exist", "is not a file"', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'offshoot-'));
  const saved = process.env['OFFSHOOT_BIN'];
  try {
    process.env['OFFSHOOT_BIN'] = join(empty, 'nope');
    await assert.rejects(
      startDaemon(),
      (e: unknown) => e instanceof OffshootError && /OFFSHOOT_BIN/.test(e.message) && /does not exist/.test(e.message),
    );
    process.env['OFFSHOOT_BIN'] = empty;
    await assert.rejects(startDaemon(), (e: unknown) => e instanceof OffshootError && /is not a file/.test(e.message));
    writeFileSync(join(empty, 'plain'), '#!/bin/sh\n');
    process.env['OFFSHOOT_BIN'] = join(empty, 'plain');
    await assert.rejects(
      startDaemon(),
      (e: unknown) => isOffshootError(e, 'NOT_FOUND') && /not executable/.test(e.message),
    );
  } finally {
    process.env['OFFSHOOT_BIN'] = saved;
    rmSync(empty, { recursive: true, force: true });
  }
});

test('binary resolution errors name both OFFSHOOT_BIN and PATH', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'offshoot-'));
  try {
    assert.throws(
      () => findOffshootBinary(undefined, { PATH: empty }),
      (e: unknown) => isOffshootError(e, 'NOT_FOUND') && /OFFSHOOT_BIN/.test(e.message) && /PATH/.test(e.message),
    );
    assert.throws(
      () => findOffshootBinary(undefined, { OFFSHOOT_BIN: join(empty, 'nope'), PATH: empty }),
      (e: unknown) => isOffshootError(e, 'NOT_FOUND') && /OFFSHOOT_BIN/.test(e.message) && /PATH/.test(e.hint ?? ''),
    );
    await assert.rejects(startDaemon({ bin: join(empty, 'nope') }), (e) => isOffshootError(e, 'NOT_FOUND'));
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

describe('the earlier testkit behaviours on a real daemon', { timeout: 120_000 }, () => {
  let daemon: DaemonHandle;
  before(async () => {
    daemon = await startDaemon();
  });
  after(async () => {
    await daemon.stop();
  });

  test('seed SQL without a trailing semicolon seeds; a different seed under the name says DIFFERENT seed', async () => {
    const seed: SeedHandle = await seedOnce(daemon, {
      name: 'nosemi',
      seed: 'CREATE TABLE t(v);\nINSERT INTO t VALUES (1)',
    });
    const fork: ForkedSession = await forkPerTest(daemon, seed);
    try {
      assert.match(await dump(fork.path), /INSERT INTO t VALUES\(1\);/);
      assert.ok((await fork.flush('named', { meta: { k: 'v' } })) > 0);
    } finally {
      await fork.close();
    }
    await assert.rejects(
      seedOnce(daemon, { name: 'nosemi', seed: 'CREATE TABLE u(v)' }),
      (e) => isOffshootError(e, 'INVALID_ARGUMENT') && /called again with a DIFFERENT seed/.test(e.message),
    );
  });

  test('export refuses a relative output path before asking the daemon; branches read missing fields as ""', async () => {
    const c = await connect(daemon.sock);
    try {
      await assert.rejects(c.export('eval-nosemi', 'main', 'out.db'), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
      const main = (await c.branches('eval-nosemi')).find((b) => b.branch === 'main');
      assert.equal(main?.ttl, '');
      assert.equal(main?.lease_holder, '');
      assert.equal(typeof main?.state, 'string');
    } finally {
      await c.close();
    }
  });

  test('new Client(socket, socketPath), as the earlier suites build one, runs ops and streams events', async () => {
    const socket = createConnection(daemon.sock);
    await once(socket, 'connect');
    const c = new earlier.Client(socket, daemon.sock);
    try {
      await c.create('built-by-hand');
      let opened: Promise<earlier.Session> | undefined;
      const events = c.events({ onSubscribed: () => (opened = c.open('built-by-hand')) });
      for await (const ev of events) if (ev.type === 'session_opened' && ev.db === 'built-by-hand') break;
      const session = await opened;
      assert.ok(session !== undefined);
      await session.close();
    } finally {
      await c.close();
    }
    const bare = createConnection(daemon.sock);
    await once(bare, 'connect');
    const noPath = new earlier.Client(bare);
    try {
      assert.ok((await noPath.dbs()).includes('built-by-hand'));
      assert.throws(
        () => noPath.events(),
        (e: unknown) => isOffshootError(e, 'USAGE'),
      );
    } finally {
      await noPath.close();
    }
  });

  test('a fork whose name another process took moves on to the next number', async () => {
    const c = await connect(daemon.sock);
    const seed = await seedOnce(daemon, { name: 'nosemi', seed: 'CREATE TABLE t(v);\nINSERT INTO t VALUES (1)' });
    const taken = `t-local-${client.sanitizeName('race')}-`;
    try {
      const probe = await forkPerTest(daemon, seed, { name: 'race' });
      const n = Number(probe.branch.slice(taken.length));
      await c.fork(seed.db, 'main', `${taken}${n + 1}`, { from: 'seed', ttl: '1h' });
      const next = await forkPerTest(daemon, seed, { name: 'race' });
      assert.equal(next.branch, `${taken}${n + 2}`);
      await probe.close();
      await next.close();
    } finally {
      await c.close();
    }
  });
});

test('after stop() no timer or child holds the event loop: the test process exits by itself', {
  timeout: 150_000,
}, async () => {
  const { code, out } = await childExit([]);
  assert.equal(code, 0, out);
  const active = JSON.parse(out.trim().split('\n').pop() ?? '[]') as string[];
  // A timer left behind (such as a SIGKILL deadline stop() never cleared) would hold the loop for its whole delay.
  assert.deepEqual(
    active.filter((r) => r === 'Timeout' || r === 'ProcessWrap'),
    [],
  );
});
