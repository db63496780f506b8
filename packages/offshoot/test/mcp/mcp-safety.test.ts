// The safety posture over a real stdio connection: every refusal with and without -allow-force, each proving no
// ref changed, and the undo path through the rollback's backup.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  makeMcpStore,
  ok,
  refsSnapshot,
  refused,
  startMcp,
  type Call,
  type McpSession,
  type McpStore,
} from './mcp-harness.js';

describe('offshoot mcp: the safety posture', () => {
  let s: McpStore;
  let safe: McpSession;
  before(async () => {
    s = makeMcpStore();
    // main gets a second checkpoint, so a rollback has somewhere to go.
    const main = s.cli(['checkout', 'app']).stdout.trim();
    s.sqlite(main, "INSERT INTO t(v) VALUES ('main-2');");
    s.cli(['checkpoint', 'app', 'v2']);
    s.cli(['fork', 'app', 'try']);
    const tryPath = s.cli(['checkout', 'app@try']).stdout.trim();
    s.sqlite(tryPath, "INSERT INTO t(v) VALUES ('from-try');");
    s.cli(['checkpoint', 'app@try', 'done']);
    s.cli(['fork', 'app', 'leased']);
    s.cli(['lease', 'acquire', 'app@leased', '--ttl', '1h']);
    safe = await startMcp(s.store);
  });
  after(async () => {
    await safe.close();
    s.cleanup();
  });

  /** Runs a call that must be refused with `code`, and asserts no ref changed. */
  async function unchanged(
    m: McpSession,
    tool: string,
    args: Record<string, unknown>,
    code: string,
    re?: RegExp,
  ): Promise<Call> {
    const before = refsSnapshot(s.store);
    const r = await m.call(tool, args);
    refused(r, code, re);
    assert.deepEqual(refsSnapshot(s.store), before, `${tool} ${JSON.stringify(args)} changed nothing`);
    return r;
  }

  test('without -allow-force: promote onto protected main is refused, force or not, naming -allow-force', async () => {
    for (const force of [undefined, false, true]) {
      const r = await unchanged(
        safe,
        'offshoot_promote',
        { database: 'app', source: 'try', target: 'main', ...(force === undefined ? {} : { force }) },
        'PROTECTED',
        /-allow-force/,
      );
      assert.match(r.text, /offshoot promote app@try --onto main --force/);
    }
    await unchanged(safe, 'offshoot_destroy', { database: 'app', branch: 'main' }, 'PROTECTED', /-allow-force/);
    await unchanged(
      safe,
      'offshoot_destroy',
      { database: 'app', branch: 'main', force: true },
      'PROTECTED',
      /-allow-force/,
    );
  });

  test('without -allow-force: force never takes a live lease either (there is no bypass to gate)', async () => {
    await unchanged(
      safe,
      'offshoot_destroy',
      { database: 'app', branch: 'leased', force: true },
      'LEASE_HELD',
      /leased by/,
    );
    await unchanged(safe, 'offshoot_destroy', { database: 'app', branch: 'leased' }, 'LEASE_HELD');
  });

  test('the rules fail closed when the ref cannot be read, and a forced agent never removes a malformed ref', async () => {
    s.cli(['fork', 'app', 'victim']);
    const victim = join(s.store, 'refs/app/victim');
    const good = readFileSync(victim);
    writeFileSync(victim, '{not json');
    const forcing = await startMcp(s.store, ['-allow-force']);
    try {
      await unchanged(safe, 'offshoot_destroy', { database: 'app', branch: 'victim', force: true }, 'CORRUPT');
      await unchanged(forcing, 'offshoot_destroy', { database: 'app', branch: 'victim', force: true }, 'CORRUPT');
      await unchanged(
        forcing,
        'offshoot_promote',
        { database: 'app', source: 'try', target: 'victim', force: true },
        'CORRUPT',
      );
    } finally {
      await forcing.close();
      writeFileSync(victim, good);
    }
  });

  test('rollback keeps <branch>-pre-rollback as backup and names the human undo for a protected branch', async () => {
    const r = ok(await safe.call('offshoot_rollback', { database: 'app', branch: 'main', to: 'init' }));
    assert.equal(r.backup, 'main-pre-rollback');
    assert.equal(r.protected, true);
    assert.equal(r.undo, 'offshoot promote app@main-pre-rollback --onto main --force');
    assert.equal(s.sqlite(r.path as string, 'SELECT count(*) FROM t;').trim(), '3');
    assert.match(s.cli(['status', 'app']).stdout, /app@main-pre-rollback .*ttl=24h0m0s/);
  });

  test('without -allow-force: the undo point of a protected branch is left to the human', async () => {
    await unchanged(
      safe,
      'offshoot_rollback',
      { database: 'app', branch: 'main', to: 'init' },
      'PROTECTED',
      /undo point/,
    );
    await unchanged(
      safe,
      'offshoot_destroy',
      { database: 'app', branch: 'main-pre-rollback' },
      'PROTECTED',
      /undo point/,
    );
    await unchanged(
      safe,
      'offshoot_destroy',
      { database: 'app', branch: 'main-pre-rollback', force: true },
      'PROTECTED',
      /-allow-force/,
    );
    await unchanged(
      safe,
      'offshoot_touch',
      { database: 'app', branch: 'main-pre-rollback', ttl: '1m' },
      'PROTECTED',
      /shortening or clearing/,
    );
    await unchanged(safe, 'offshoot_touch', { database: 'app', branch: 'main-pre-rollback', ttl: 'none' }, 'PROTECTED');
    await unchanged(
      safe,
      'offshoot_promote',
      { database: 'app', source: 'try', target: 'main-pre-rollback' },
      'PROTECTED',
      /undo point/,
    );
    await unchanged(
      safe,
      'offshoot_promote',
      { database: 'app', source: 'try', target: 'main-pre-rollback', force: true },
      'PROTECTED',
    );
    // Extending its life is never blocked.
    const plain = ok(await safe.call('offshoot_touch', { database: 'app', branch: 'main-pre-rollback' }));
    assert.equal(plain.ttl, '24h0m0s');
    assert.equal(
      ok(await safe.call('offshoot_touch', { database: 'app', branch: 'main-pre-rollback', ttl: '72h' })).ttl,
      '72h0m0s',
    );
  });

  test('an unprotected branch: the agent rolls back and undoes it itself through the backup', async () => {
    const r = ok(await safe.call('offshoot_rollback', { database: 'app', branch: 'try', to: 'fork' }));
    assert.equal(r.backup, 'try-pre-rollback');
    assert.equal(r.undo, 'offshoot_promote database=app source=try-pre-rollback target=try');
    assert.equal(s.sqlite(r.path as string, "SELECT count(*) FROM t WHERE v = 'from-try';").trim(), '0');
    const p = ok(await safe.call('offshoot_promote', { database: 'app', source: 'try-pre-rollback', target: 'try' }));
    assert.equal(s.sqlite(p.path as string, "SELECT count(*) FROM t WHERE v = 'from-try';").trim(), '1');
    // Undo points of an unprotected branch are the agent's to manage.
    ok(await safe.call('offshoot_destroy', { database: 'app', branch: 'try-pre-rollback' }));
  });

  test('with -allow-force: force is honoured, and only when passed', async () => {
    const forcing = await startMcp(s.store, ['-allow-force']);
    try {
      await unchanged(
        forcing,
        'offshoot_promote',
        { database: 'app', source: 'try', target: 'main' },
        'PROTECTED',
        /needs force: true/,
      );
      const p = ok(
        await forcing.call('offshoot_promote', { database: 'app', source: 'try', target: 'main', force: true }),
      );
      assert.equal(p.backup, 'main-pre-promote');
      assert.equal(s.sqlite(p.path as string, "SELECT count(*) FROM t WHERE v = 'from-try';").trim(), '1');
      const r = ok(await forcing.call('offshoot_rollback', { database: 'app', branch: 'main', to: 'promote' }));
      assert.equal(r.undo, 'offshoot_promote database=app source=main-pre-rollback target=main force=true');
      ok(await forcing.call('offshoot_touch', { database: 'app', branch: 'main-pre-rollback', ttl: '1m' }));
      ok(await forcing.call('offshoot_destroy', { database: 'app', branch: 'main-pre-promote' }));
      // force never takes a live lease, whatever the server allows (one writer per branch across daemons).
      await unchanged(
        forcing,
        'offshoot_destroy',
        { database: 'app', branch: 'leased', force: true },
        'LEASE_HELD',
        /leased by/,
      );
      await unchanged(
        forcing,
        'offshoot_destroy',
        { database: 'app', branch: 'main' },
        'PROTECTED',
        /needs force: true/,
      );
    } finally {
      await forcing.close();
    }
  });
});
