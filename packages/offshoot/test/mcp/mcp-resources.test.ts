// Branches as resources, subscriptions and list_changed, resource links in tool results, argument completion, the
// logging capability, progress on a cold checkout and the cancellation of a running query: a real client over stdio.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type CallToolResult,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { until } from '../daemon/daemon-process.js';
import { makeMcpStore, ok, startMcp, type McpSession, type McpStore } from './mcp-harness.js';

describe('offshoot mcp: resources, completion, logging, progress, cancellation', () => {
  let s: McpStore;
  let m: McpSession;
  const updated: string[] = [];
  let listChanged = 0;
  const logs: string[] = [];
  before(async () => {
    s = makeMcpStore();
    s.cli(['checkout', 'app']);
    s.cli(['checkpoint', 'app', 'seeded']);
    m = await startMcp(s.store, ['-reap-every', '50ms', '-query-timeout', '10m'], {
      setup: (c) => {
        c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
        c.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanged++);
        c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
      },
    });
  });
  after(async () => {
    await m.close();
    s.cleanup();
  });

  test('the four templates are listed, and so are the databases, branches, schemas and checkpoints', async () => {
    const templates = (await m.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.deepEqual(templates.sort(), [
      'offshoot://{database}',
      'offshoot://{database}/{branch}',
      'offshoot://{database}/{branch}/checkpoint/{checkpoint}',
      'offshoot://{database}/{branch}/schema',
    ]);
    const uris = (await m.client.listResources()).resources.map((r) => r.uri);
    for (const u of ['offshoot://app', 'offshoot://app/main', 'offshoot://app/main/schema'])
      assert.ok(uris.includes(u), `${u} in ${uris.join(' ')}`);
    assert.ok(uris.includes('offshoot://app/main/checkpoint/seeded'));
    assert.equal(m.client.getServerCapabilities()?.resources?.subscribe, true);
  });

  test('each resource reads: branch status and database as JSON, the schema as CREATE statements', async () => {
    const text = async (uri: string) => {
      const c = (await m.client.readResource({ uri })).contents[0];
      return c && 'text' in c ? c.text : '';
    };
    const main = JSON.parse(await text('offshoot://app/main')) as { txid: number; protected: boolean };
    assert.equal(main.protected, true);
    assert.equal(typeof main.txid, 'number');
    const db = JSON.parse(await text('offshoot://app')) as { branches: Array<{ branch: string }> };
    assert.deepEqual(
      db.branches.map((b) => b.branch),
      ['main'],
    );
    assert.match(await text('offshoot://app/main/schema'), /^CREATE TABLE t\(id INTEGER PRIMARY KEY, v TEXT\);/);
    const cp = JSON.parse(await text('offshoot://app/main/checkpoint/seeded')) as { name: string; txid: number };
    assert.equal(cp.name, 'seeded');
    await assert.rejects(m.client.readResource({ uri: 'offshoot://app/nope' }), /NOT_FOUND/);
  });

  test('completion offers database, branch and checkpoint names', async () => {
    const ref = { type: 'ref/resource' as const, uri: 'offshoot://{database}/{branch}/checkpoint/{checkpoint}' };
    const dbs = await m.client.complete({ ref, argument: { name: 'database', value: 'a' } });
    assert.deepEqual(dbs.completion.values, ['app']);
    const branches = await m.client.complete({
      ref,
      argument: { name: 'branch', value: 'm' },
      context: { arguments: { database: 'app' } },
    });
    assert.deepEqual(branches.completion.values, ['main']);
    const cps = await m.client.complete({
      ref,
      argument: { name: 'checkpoint', value: 's' },
      context: { arguments: { database: 'app', branch: 'main' } },
    });
    assert.deepEqual(cps.completion.values, ['seeded']);
  });

  test('completion of an argument no template has, even one named like an Object member, is empty', async () => {
    const ref = { type: 'ref/resource' as const, uri: 'offshoot://{database}/{branch}' };
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'checkpoint']) {
      const r = await m.client.complete({ ref, argument: { name, value: '' } });
      assert.deepEqual(r.completion.values, [], name);
    }
  });

  test('reading an invalid name is invalid params (-32602) whose hint names a valid one; no hint names an invalid one', async () => {
    const refusal = async (uri: string): Promise<{ code: number; message: string }> => {
      try {
        await m.client.readResource({ uri });
      } catch (err) {
        return err as { code: number; message: string };
      }
      assert.fail(`${uri} was read`);
    };
    for (const [uri, valid] of [
      ['offshoot://Bad!', 'bad'],
      ['offshoot://APP/main', 'app'],
      ['offshoot://app/Bad!/schema', 'bad'],
      ['offshoot://app/Bad!', 'bad'],
      ['offshoot://app/main/checkpoint/Seeded', 'seeded'],
    ] as const) {
      const e = await refusal(uri);
      assert.equal(e.code, -32602, `${uri}: ${e.message}`);
      assert.match(e.message, /INVALID_NAME/, uri);
      assert.ok(e.message.includes(`"${valid}"`), `${uri}: the hint names ${valid}: ${e.message}`);
    }
    const missing = await refusal('offshoot://app/nope/schema');
    assert.equal(missing.code, -32602);
    assert.match(missing.message, /NOT_FOUND/);
    assert.doesNotMatch(missing.message, /offshoot fork/, 'an agent is told tools, not CLI commands');
    assert.match(missing.message, /offshoot_fork/);
  });

  test('tool results link the branches they touched', async () => {
    const r = (await m.client.callTool({
      name: 'offshoot_fork',
      arguments: { database: 'app', new_branch: 'linked', ttl: 'none' },
    })) as CallToolResult;
    const links = r.content.filter((c) => c.type === 'resource_link').map((c) => c.uri);
    assert.deepEqual(links, ['offshoot://app/linked', 'offshoot://app/main']);
  });

  test("a subscribed branch is notified when its ref moves, by this server's tools or the CLI", async () => {
    await m.client.subscribeResource({ uri: 'offshoot://app/linked' });
    const before = listChanged;
    ok(await m.call('offshoot_checkout', { database: 'app', branch: 'linked' }));
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'linked', name: 'one' }));
    await until(() => updated.includes('offshoot://app/linked'), 'the update after a checkpoint');
    updated.length = 0;
    s.cli(['touch', 'app@linked']);
    await until(() => updated.includes('offshoot://app/linked'), 'the update after a CLI touch');
    s.cli(['fork', 'app', 'other', '--ttl', '1h']);
    await until(() => listChanged > before, 'list_changed after a CLI fork');
    updated.length = 0;
    s.cli(['destroy', 'app@linked']);
    await until(() => updated.includes('offshoot://app/linked'), 'the update after a destroy');
    await m.client.unsubscribeResource({ uri: 'offshoot://app/linked' });
  });

  test('with a log level set, the reaper logs to the client instead of stderr', async () => {
    await m.client.setLoggingLevel('info');
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'short', ttl: '1ms' }));
    await until(() => logs.some((l) => /reaped .*app@short/.test(l)), 'the reaper log message');
    assert.doesNotMatch(m.stderr(), /reaped/);
  });

  test('a checkout of a cold chain reports progress when asked', async () => {
    // Nothing of app's chains is cached: the checkout reads every member from the store.
    const cache = join(s.store, 'checkouts-ro', 'app');
    s.cli(['fork', 'app', 'cold']);
    rmSync(cache, { recursive: true, force: true });
    const seen: string[] = [];
    const r = (await m.client.callTool(
      { name: 'offshoot_checkout', arguments: { database: 'app', branch: 'cold' } },
      undefined,
      { onprogress: (p) => void seen.push(p.message ?? '') },
    )) as CallToolResult;
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    assert.ok(
      seen.some((l) => /checking out app@cold/.test(l)),
      seen.join('\n'),
    );
    assert.ok(
      seen.some((l) => /^checkout app@cold: \d+ of \d+ bytes$/.test(l)),
      `the materialization's own progress: ${seen.join('\n')}`,
    );
  });

  test('a cold checkout cancelled mid-download leaves no half-written file, and the server keeps serving', async () => {
    const seed = join(s.dir, 'big.db');
    s.sqlite(
      seed,
      'CREATE TABLE b(x BLOB); INSERT INTO b SELECT randomblob(8192) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT 3000) SELECT i FROM c);',
    );
    s.cli(['create', 'big', '--from', seed]);
    rmSync(join(s.store, 'checkouts-ro', 'big'), { recursive: true, force: true });
    const controller = new AbortController();
    await assert.rejects(
      m.client.callTool({ name: 'offshoot_checkout', arguments: { database: 'big' } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          if (/bytes$/.test(p.message ?? '')) controller.abort('stop');
        },
      }),
    );
    // Whether the cancel landed mid-stream (the usual case) or after the last byte, no temp file outlives the call.
    const temps = () =>
      ['checkouts', 'checkouts-ro']
        .map((d) => join(s.store, d, 'big'))
        .filter((d) => existsSync(d))
        .flatMap((d) => readdirSync(d, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('.tmp-')));
    await until(() => temps().length === 0, 'no temp file left');
    const checkout = join(s.store, 'checkouts', 'big', 'main.db');
    if (existsSync(checkout)) assert.equal(s.sqlite(checkout, 'PRAGMA integrity_check;').trim(), 'ok');
    ok(await m.call('offshoot_list', { database: 'big' }));
  });

  test('a cancelled query stops: its child process is killed and the server keeps serving', async () => {
    const pid = Number(execFileSync('pgrep', ['-n', '-f', `${s.store} mcp`], { encoding: 'utf8' }).trim());
    const controller = new AbortController();
    const call = m.client.callTool(
      {
        name: 'offshoot_query',
        arguments: {
          database: 'app',
          sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
        },
      },
      undefined,
      { signal: controller.signal, onprogress: () => controller.abort('the human pressed stop') },
    );
    await assert.rejects(call);
    const children = () => {
      try {
        return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    };
    await until(() => children() === '', 'the query child to be gone');
    const q = ok(await m.call('offshoot_query', { database: 'app', sql: 'SELECT count(*) FROM t' }));
    assert.deepEqual(q.rows, [[3]]);
  });
});
