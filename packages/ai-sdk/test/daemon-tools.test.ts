// offshootTools over a real daemon, driven through the real AI SDK (generateText) by its own offline test model,
// scripted. A tap between the client and the daemon shows what each tool sent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Client, connect, isOffshootError, OffshootError } from '@offshoot/client';
import { startDaemon, type TestDaemon } from '@offshoot/client/testkit';
import { offshootTools } from '../src/index.js';
import { answered, approvalOf, runSql, sql } from './host.js';
import { callOnce, run } from './scripted-model.js';
import { type WireTap, wireTap } from './wire-tap.js';

process.env['OFFSHOOT_BIN'] = fileURLToPath(new URL('../../../offshoot', import.meta.url));

describe('offshootTools over a daemon', { timeout: 180_000 }, () => {
  let daemon: TestDaemon;
  let human: Client;
  let tap: WireTap;
  let agent: Client;

  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    human = await connect(daemon.sock);
    await human.create('app');
    const s = await human.open('app');
    sql(s.path, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'seed');");
    await s.flush('seeded');
    await s.close();
    tap = await wireTap(daemon.sock);
    agent = await connect(tap.sock);
  });
  after(async () => {
    agent.close();
    human.close();
    await tap.close();
    await daemon.stop();
  });

  test('the loop in one run: fork, checkout, write, checkpoint, diff, query; each tool one client call', async () => {
    const tools = { ...offshootTools({ client: agent }), run_sql: runSql };
    const r = await run(tools, [
      { calls: [{ tool: 'offshoot_fork', input: { database: 'app', new_branch: 'attempt-1', meta: { run: '1' } } }] },
      { calls: [{ tool: 'offshoot_checkout', input: { database: 'app', branch: 'attempt-1' } }] },
      (last) => ({
        calls: [
          {
            tool: 'run_sql',
            input: { path: (last as { path: string }).path, sql: "INSERT INTO notes VALUES (2, 'new')" },
          },
        ],
      }),
      { calls: [{ tool: 'offshoot_checkpoint', input: { database: 'app', branch: 'attempt-1', name: 'tests-pass' } }] },
      { calls: [{ tool: 'offshoot_diff', input: { database: 'app', target: 'attempt-1' } }] },
      {
        calls: [
          {
            tool: 'offshoot_query',
            input: { database: 'app', branch: 'attempt-1', sql: 'SELECT count(*) n FROM notes' },
          },
        ],
      },
      { text: 'attempt-1 adds one note' },
    ]);
    assert.equal(r.text, 'attempt-1 adds one note');
    const outputs = Object.fromEntries(
      r.steps.flatMap((s) => s.toolResults.map((t) => [t.toolName, t.output as Record<string, unknown>])),
    );
    const forked = outputs['offshoot_fork'] as { txid: number; expires_at: string };
    assert.deepEqual(outputs['offshoot_fork'], {
      db: 'app',
      source: 'main',
      branch: 'attempt-1',
      txid: forked.txid,
      at: null,
      ttl: '24h0m0s',
      ttl_source: 'default',
      expires_at: forked.expires_at,
      via: 'daemon',
      meta: { run: '1' },
    });
    assert.ok(Date.parse(forked.expires_at) > Date.now(), 'the daemon reports when the fork expires');
    assert.deepEqual(
      { ...outputs['offshoot_checkout'], path: '' },
      {
        db: 'app',
        branch: 'attempt-1',
        path: '',
        txid: forked.txid,
        live: false,
        reused: false,
        dirty: false,
        kept: null,
      },
    );
    assert.equal(outputs['offshoot_checkpoint']?.['kind'], 'segment');
    const notes = (outputs['offshoot_diff'] as { tables: Array<Record<string, unknown>> }).tables.find(
      (t) => t['table'] === 'notes',
    );
    assert.deepEqual(
      [notes?.['status'], notes?.['added'], notes?.['rows']],
      ['changed', 1, { added: [{ id: 2, body: 'new' }], removed: [], changed: [] }],
    );
    assert.deepEqual(outputs['offshoot_query']?.['rows'], [[2]]);

    const fork = (await human.branches('app')).find((b) => b.branch === 'attempt-1');
    assert.ok(fork?.ttl, 'the fork got the default TTL');
    assert.ok(fork.checkpoints.includes('tests-pass'));
    const ops = tap.requests.map((q) => q['op']);
    for (const op of ['fork', 'checkout', 'checkpoint', 'diff', 'query'])
      assert.equal(ops.filter((o) => o === op).length, 1, `one ${op} request`);
    for (const q of tap.requests.filter((q) => q['op'] === 'fork' || q['op'] === 'checkpoint'))
      assert.equal(q['actor'], 'agent', `${String(q['op'])} says an agent asks`);
  });

  test('an unforced promote onto protected main is refused at once: the human is not asked, the hint reaches the model', async () => {
    const tools = offshootTools({ client: agent });
    const before = tap.requests.length;
    const r = await callOnce(tools, 'offshoot_promote', { database: 'app', source: 'attempt-1', target: 'main' });
    const err = (r.content[0] as { type: string; error: unknown }).error;
    assert.equal(r.content[0]?.type, 'tool-error');
    assert.ok(isOffshootError(err, 'PROTECTED'), String(err));
    assert.match(String((err as Error).message), /force/, 'the hint reaches the model');
    assert.deepEqual(
      tap.requests.slice(before).map((q) => q['op']),
      ['promote'],
      'no check: only a forced promote may be put to the human',
    );
  });

  test('a forced promote onto protected main waits for the human: denied, nothing moves; approved, that call forces', async () => {
    const tools = offshootTools({ client: agent });
    const mainRows = () => human.query('app', 'main', 'SELECT count(*) FROM notes');
    const before = await mainRows();
    const sent = tap.requests.length;
    const input = { database: 'app', source: 'attempt-1', target: 'main', force: true };
    const first = await callOnce(tools, 'offshoot_promote', input);
    const approvalId = approvalOf(first.content);
    assert.deepEqual(
      tap.requests.slice(sent),
      [
        {
          op: 'check',
          verb: 'promote',
          db: 'app',
          branch: 'attempt-1',
          name: 'main',
          force: true,
          actor: 'agent',
          origin: { surface: 'sdk:ai-sdk/ai' },
        },
      ],
      'one check of the call, and nothing else, before the human answers',
    );
    assert.deepEqual(await mainRows(), before);

    const denied = await run(tools, [{ text: 'ok, I will not' }], answered(first.result, approvalId, false));
    assert.equal(denied.text, 'ok, I will not');
    assert.deepEqual(await mainRows(), before);
    assert.equal(tap.requests.filter((q) => q['op'] === 'promote').length, 1, 'only the unforced one of before');

    const approved = await run(
      tools,
      [(last) => ({ text: JSON.stringify(last) })],
      answered(first.result, approvalId, true),
    );
    assert.match(approved.text, /"target":"main"/);
    assert.deepEqual((await mainRows()).rows, [[2]], 'main holds the attempt');
    const promotes = tap.requests.filter((q) => q['op'] === 'promote');
    assert.deepEqual(promotes.at(-1), {
      op: 'promote',
      db: 'app',
      branch: 'attempt-1',
      name: 'main',
      force: true,
      actor: 'agent',
      allow_force: true,
      origin: { surface: 'sdk:ai-sdk/ai' },
    });
    const again = await callOnce(tools, 'offshoot_fork', { database: 'app', new_branch: 'after-approval' });
    assert.equal(again.content[0]?.type, 'tool-result');
    const fork = tap.requests.filter((q) => q['op'] === 'fork').at(-1);
    assert.equal(fork?.['allow_force'], undefined, 'the yes was for that one call');
  });

  test('destroy and rollback of a fork run at once; a second rollback of protected main asks first', async () => {
    const tools = offshootTools({ client: agent });
    await human.fork('app', 'main', 'scratch');
    const d = await callOnce(tools, 'offshoot_destroy', { database: 'app', branch: 'scratch' });
    assert.deepEqual((d.content[0] as { output: unknown }).output, {
      db: 'app',
      branch: 'scratch',
      removed_checkout: false,
    });
    assert.ok(!(await human.branches('app')).some((b) => b.branch === 'scratch'));

    const rb = await callOnce(tools, 'offshoot_rollback', { database: 'app', branch: 'attempt-1', to: 'fork' });
    const out = (rb.content[0] as { output: Record<string, unknown> }).output;
    assert.deepEqual(
      [out['backup'], out['protected'], out['undo']],
      ['attempt-1-pre-rollback', false, 'offshoot_promote database=app source=attempt-1-pre-rollback target=attempt-1'],
    );
    assert.deepEqual(await human.query('app', 'attempt-1', 'SELECT count(*) FROM notes'), {
      source: 'checkout',
      columns: ['count(*)'],
      rows: [[1]],
      truncated: false,
    });
    const once = await callOnce(tools, 'offshoot_rollback', { database: 'app', to: 'promote' });
    const undo = (once.content[0] as { output: Record<string, unknown> }).output['undo'];
    assert.equal(undo, 'offshoot promote app@main-pre-rollback --onto main --force', 'undoing it is the human’s');
    const sent = tap.requests.length;
    const twice = await callOnce(tools, 'offshoot_rollback', { database: 'app', to: 'promote' });
    approvalOf(twice.content);
    assert.deepEqual(
      tap.requests.slice(sent).map((q) => q['op']),
      ['check'],
      'nothing was rolled back before the human answered',
    );
  });

  test("a failure is the client's OffshootError with its code, the hint kept, for the host and the model", async () => {
    const tools = offshootTools({ client: agent });
    const missing = await callOnce(tools, 'offshoot_checkout', { database: 'app', branch: 'nope' });
    const err = (missing.content[0] as { type: string; error: unknown }).error;
    assert.equal(missing.content[0]?.type, 'tool-error');
    assert.ok(err instanceof OffshootError && isOffshootError(err, 'NOT_FOUND'), String(err));
    assert.ok(isOffshootError(err.cause, 'NOT_FOUND'), 'the original error is the cause');
    assert.match(err.message, /\(NOT_FOUND/);

    const count = () => human.query('app', 'main', 'SELECT count(*) FROM notes');
    const before = await count();
    const write = await callOnce(tools, 'offshoot_query', { database: 'app', sql: 'DELETE FROM notes' });
    const werr = (write.content[0] as { error: unknown }).error;
    assert.ok(isOffshootError(werr, 'INVALID_ARGUMENT'), String(werr));
    assert.deepEqual(await count(), before);

    const wide = await callOnce(tools, 'offshoot_diff', { database: 'app', target: 'attempt-1', limit: 501 });
    const derr = (wide.content[0] as { error: unknown }).error;
    assert.ok(isOffshootError(derr, 'INVALID_ARGUMENT'), String(derr));
    assert.match(String((derr as Error).message), /out of range \(0\.\.500\).*summary: true/);
  });

  test("checkout asks as an agent, and a session's live path comes from the daemon", async () => {
    const tools = offshootTools({ client: agent });
    await human.fork('app', 'main', 'live-one');
    const s = await human.open('app', 'live-one');
    try {
      const before = tap.requests.length;
      const r = await callOnce(tools, 'offshoot_checkout', { database: 'app', branch: 'live-one' });
      const durable = (await human.status()).find((x) => x.branch === 'live-one')?.durable_txid;
      assert.deepEqual((r.content[0] as { output: unknown }).output, {
        db: 'app',
        branch: 'live-one',
        path: s.path,
        txid: durable,
        live: true,
        reused: true,
        dirty: false,
        kept: null,
      });
      assert.deepEqual(tap.requests.slice(before), [
        {
          op: 'checkout',
          db: 'app',
          branch: 'live-one',
          live: true,
          actor: 'agent',
          origin: { surface: 'sdk:ai-sdk/ai' },
        },
      ]);
    } finally {
      await s.close();
    }
  });

  test('allowForce is passed with every mutation for the daemon to judge', async () => {
    const tools = offshootTools({ client: agent, allowForce: true, defaultTtl: 'none' });
    const before = tap.requests.length;
    await callOnce(tools, 'offshoot_fork', { database: 'app', new_branch: 'forced' });
    const fork = tap.requests.slice(before).find((q) => q['op'] === 'fork');
    assert.deepEqual(fork, {
      op: 'fork',
      db: 'app',
      branch: 'main',
      name: 'forced',
      actor: 'agent',
      allow_force: true,
      origin: { surface: 'sdk:ai-sdk/ai' },
    });
    const forced = (await human.branches('app')).find((b) => b.branch === 'forced');
    assert.ok(forced !== undefined && !forced.ttl, 'ttl none: the fork has no TTL');
  });
});
