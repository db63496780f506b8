import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { type Branch, connect, isOffshootError, OffshootError } from '../src/index.js';

/** A scripted stand-in for the daemon: `answer` decides the reply line for each request line (undefined = no reply). */
interface FakeDaemon {
  sock: string;
  lines: string[];
  answer: (req: Record<string, unknown>, socket: Socket) => string | undefined | Promise<string | undefined>;
  server: Server;
}

const dir = mkdtempSync(join(tmpdir(), 'offshoot-'));
let fake: FakeDaemon;

before(async () => {
  const sock = join(dir, 'fake.sock');
  fake = {
    sock,
    lines: [],
    answer: () => '{"ok":true}',
    server: createServer((socket) => {
      let buf = '';
      let chain = Promise.resolve();
      socket.on('error', () => undefined);
      socket.on('data', (d) => {
        buf += d.toString('utf8');
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          fake.lines.push(line);
          chain = chain.then(async () => {
            const reply = await fake.answer(JSON.parse(line) as Record<string, unknown>, socket);
            if (reply !== undefined && !socket.destroyed) socket.write(`${reply}\n`);
          });
        }
      });
    }),
  };
  await new Promise<void>((r) => fake.server.listen(sock, r));
});

after(async () => {
  await new Promise((r) => fake.server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

function reset(answer: FakeDaemon['answer']): void {
  fake.lines.length = 0;
  fake.answer = answer;
}

/**
 * The request lines sent, each checked to say it comes from this SDK (`origin`, for the branch log) and shown
 * without that field.
 */
function sentWithoutOrigin(): Array<Record<string, unknown>> {
  return fake.lines.map((l) => {
    const { origin, ...rest } = JSON.parse(l) as Record<string, unknown>;
    assert.deepEqual(origin, { surface: 'sdk:typescript' }, `every request names its surface: ${l}`);
    return rest;
  });
}

test('fields that are undefined, empty or false are left out of the request line', async () => {
  reset(() => '{"ok":true,"txid":7}');
  const c = await connect(fake.sock);
  assert.equal(await c.fork('app', 'main', 'exp', { ttl: '', meta: {} }), 7);
  await c.destroy('app', 'exp', { force: false });
  await c.destroy('app', 'exp', { force: true });
  await assert.rejects(c.export('app', 'main', 'rel/out.db'), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
  await c.export('app', 'main', resolve('abs/out.db'), { checkpoint: 'v1' });
  c.close();
  assert.deepEqual(sentWithoutOrigin(), [
    { op: 'fork', db: 'app', branch: 'main', name: 'exp' },
    { op: 'destroy', db: 'app', branch: 'exp' },
    { op: 'destroy', db: 'app', branch: 'exp', force: true },
    { op: 'export', db: 'app', branch: 'main', name: 'v1', path: resolve('abs/out.db') },
  ]);
});

test('an agent call carries actor (and allow_force when the human allowed forcing); a human call carries neither', async () => {
  reset(() => '{"ok":true,"txid":3,"checkout":"/co/x","result":{"kind":"segment","ttl":"none","touched_at":"t"}}');
  const c = await connect(fake.sock);
  const agent = { actor: 'agent' } as const;
  await c.fork('app', 'main', 'exp', { ttl: '1h', ...agent });
  await c.checkpoint('app', 'exp', 'cp', { meta: { k: 'v' }, ...agent });
  await c.rollback('app', 'exp', 'cp', agent);
  await c.promote('app', 'exp', 'main', { force: true, actor: 'agent', allowForce: true });
  await c.destroy('app', 'exp', agent);
  await c.touch('app', 'exp', agent);
  await c.rollback('app', 'exp', 'cp');
  await c.query('app', 'exp', 'SELECT 1', { at: 'cp', limit: 5 }).catch(() => undefined);
  await c.diff('app@main@init', 'app@exp', { summary: true }).catch(() => undefined);
  c.close();
  assert.deepEqual(sentWithoutOrigin(), [
    { op: 'fork', db: 'app', branch: 'main', name: 'exp', ttl: '1h', actor: 'agent' },
    { op: 'checkpoint', db: 'app', branch: 'exp', name: 'cp', meta: { k: 'v' }, actor: 'agent' },
    { op: 'rollback', db: 'app', branch: 'exp', name: 'cp', actor: 'agent' },
    { op: 'promote', db: 'app', branch: 'exp', name: 'main', force: true, actor: 'agent', allow_force: true },
    { op: 'destroy', db: 'app', branch: 'exp', actor: 'agent' },
    { op: 'touch', db: 'app', branch: 'exp', actor: 'agent' },
    { op: 'rollback', db: 'app', branch: 'exp', name: 'cp' },
    { op: 'query', db: 'app', branch: 'exp', name: 'cp', sql: 'SELECT 1', limit: 5 },
    { op: 'diff', db: 'app', branch: 'main', name: 'init', to: 'app@exp', summary: true },
  ]);
});

test("open hands the daemon's warnings to the session (none when it sends none)", async () => {
  const c = await connect(fake.sock);
  reset((req) =>
    JSON.stringify(
      req['branch'] === 'main'
        ? { ok: true, checkout: '/co/main', warnings: ['kept as app@main-pre-reopen'] }
        : { ok: true, checkout: '/co/exp' },
    ),
  );
  assert.deepEqual((await c.open('app')).warnings, ['kept as app@main-pre-reopen']);
  assert.deepEqual((await c.open('app', 'exp')).warnings, []);
  c.close();
});

test('requests are queued FIFO and never pipelined', async () => {
  const c = await connect(fake.sock);
  // When the fake starts answering request k it must have received exactly k lines: nothing was sent ahead.
  const linesWhenAnswering: number[] = [];
  reset(async (req) => {
    linesWhenAnswering.push(fake.lines.length);
    await new Promise((r) => setTimeout(r, 5));
    return JSON.stringify({ ok: true, checkout: `/co/${String(req['branch'])}` });
  });
  const paths = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((b) => c.checkout('app', b)));
  assert.deepEqual(paths, ['/co/a', '/co/b', '/co/c', '/co/d', '/co/e']);
  assert.deepEqual(
    fake.lines.map((l) => (JSON.parse(l) as { branch: string }).branch),
    ['a', 'b', 'c', 'd', 'e'],
  );
  assert.deepEqual(linesWhenAnswering, [1, 2, 3, 4, 5]);
  c.close();
});

test('daemon errors come back as OffshootError with code, hint and retryable', async () => {
  reset(() =>
    JSON.stringify({
      ok: false,
      error: 'daemon: db@main is protected',
      code: 'PROTECTED',
      hint: 'pass force',
      retryable: false,
    }),
  );
  const c = await connect(fake.sock);
  await assert.rejects(c.destroy('db', 'main'), (e: unknown) => {
    assert.ok(e instanceof OffshootError);
    assert.equal(e.code, 'PROTECTED');
    assert.equal(e.message, 'db@main is protected');
    assert.equal(e.hint, 'pass force');
    assert.equal(e.retryable, false);
    return true;
  });
  reset(() => JSON.stringify({ ok: false, error: 'daemon: unknown op "x"' }));
  await assert.rejects(c.dbs(), (e) => isOffshootError(e, 'INTERNAL') && e.message === 'unknown op "x"');
  reset(() => '{"ok":true,"databases":["x"]}');
  assert.deepEqual(await c.dbs(), ['x'], 'the connection survives an error response');
  c.close();
});

test('a malformed response fails with BAD_RESPONSE and breaks the connection', async () => {
  const c = await connect(fake.sock);
  reset(() => 'this is not json');
  const first = c.dbs();
  const queued = c.status();
  await assert.rejects(first, (e) => isOffshootError(e, 'BAD_RESPONSE') && /malformed response/.test(e.message));
  await assert.rejects(queued, (e) => isOffshootError(e, 'BAD_RESPONSE'));
  await assert.rejects(c.dbs(), (e) => isOffshootError(e, 'BAD_RESPONSE'));

  const d = await connect(fake.sock);
  reset(() => '{"ok":true}');
  await assert.rejects(
    d.compact('app', 'main'),
    (e) => isOffshootError(e, 'BAD_RESPONSE') && /no txid/.test(e.message),
  );
  d.close();
  const e2 = await connect(fake.sock);
  reset(() => '[1,2]');
  await assert.rejects(e2.dbs(), (e) => isOffshootError(e, 'BAD_RESPONSE'));
  e2.close();
});

test('a daemon that hangs up mid-request fails with CONNECTION_CLOSED; a closed client refuses requests', async () => {
  reset((_req, socket) => {
    socket.destroy();
    return undefined;
  });
  const c = await connect(fake.sock);
  await assert.rejects(
    c.status(),
    (e) => isOffshootError(e, 'CONNECTION_CLOSED') && e.message === 'daemon closed the connection',
  );
  reset(() => '{"ok":true}');
  const d = await connect(fake.sock);
  d.close();
  await assert.rejects(d.create('x'), (e) => isOffshootError(e, 'CONNECTION_CLOSED'));
});

test('connecting to a socket nobody listens on fails with a retryable CONNECTION_FAILED', async () => {
  await assert.rejects(connect(join(dir, 'nobody.sock')), (e) => {
    assert.ok(isOffshootError(e, 'CONNECTION_FAILED'));
    assert.match(e.message, /^daemon connection failed/);
    assert.equal(e.retryable, true);
    assert.match(e.hint ?? '', /offshoot serve/);
    return true;
  });
});

test('events() streams on its own connection and ends after dropped_slow_consumer', async () => {
  reset((req, socket) => {
    if (req['op'] !== 'subscribe') return '{"ok":true}';
    setImmediate(() => {
      socket.write(
        '{"v":1,"ts":"2025-01-01T00:00:00.000Z","type":"flushed","db":"a","branch":"main","detail":{"kind":"auto","txid":2,"duration_seconds":0.1}}\n',
      );
      socket.write('{"v":1,"ts":"2025-01-01T00:00:01.000Z","type":"dropped_slow_consumer"}\n');
      socket.write('{"v":1,"ts":"2025-01-01T00:00:02.000Z","type":"reaped"}\n');
    });
    return '{"ok":true}';
  });
  const c = await connect(fake.sock);
  const got = [];
  for await (const ev of c.events()) {
    if (ev.type === 'flushed') assert.equal(ev.detail.txid, 2);
    got.push(ev.type);
  }
  assert.deepEqual(got, ['flushed', 'dropped_slow_consumer']);
  assert.deepEqual(fake.lines, ['{"op":"subscribe"}']);
  c.close();
});

test('leaving the events loop early closes its socket; a refused subscribe throws the daemon error', async () => {
  let eventSocketClosed = false;
  reset((req, socket) => {
    if (req['op'] !== 'subscribe') return '{"ok":true}';
    const t = setInterval(
      () => socket.write('{"v":1,"ts":"2025-01-01T00:00:00.000Z","type":"reaped","db":"a","branch":"b"}\n'),
      2,
    );
    socket.on('close', () => {
      clearInterval(t);
      eventSocketClosed = true;
    });
    return '{"ok":true}';
  });
  const c = await connect(fake.sock);
  let n = 0;
  for await (const ev of c.events()) {
    assert.equal(ev.type, 'reaped');
    if (++n === 3) break;
  }
  const deadline = Date.now() + 30_000;
  while (!eventSocketClosed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.equal(eventSocketClosed, true, 'the event connection was closed');

  reset(() => JSON.stringify({ ok: false, error: 'daemon: subscribe refused', code: 'UNSUPPORTED' }));
  await assert.rejects(c.events().next(), (e) => isOffshootError(e, 'UNSUPPORTED'));
  c.close();
});

test('a branches entry from an older daemon, lacking state and later fields, reads with the earlier defaults', async () => {
  reset(() => '{"ok":true,"branches":[{"branch":"main","head_txid":3,"checkpoints_v2":[{"name":"init"}]}]}');
  const c = await connect(fake.sock);
  const [main] = await c.branches('app');
  await c.close();
  assert.equal(main?.state, '');
  assert.equal(main?.shared, false);
  assert.equal(main?.ttl, '');
  assert.deepEqual(main?.checkpoints, []);
  assert.deepEqual(main?.checkpoints_v2, [{ name: 'init', txid: 0, created_at: '' }]);
});

test("a branch's string fields are strings, as the earlier client typed them: code written against it compiles", async () => {
  reset(
    () =>
      '{"ok":true,"branches":[{"branch":"main","head_txid":3,"ttl":"1h0m0s","checkpoints_v2":[{"name":"init"}]},{"branch":"bare","head_txid":1}]}',
  );
  const c = await connect(fake.sock);
  const branches: Branch[] = await c.branches('app');
  const report = await c.branchReport('app');
  await c.close();
  // As the earlier client's users wrote it (tsc checks this file): no optional chaining on any string field.
  const info = new Map(branches.map((b): [string, Branch] => [b.branch, b]));
  assert.equal(info.get('main')!.ttl.startsWith('1h'), true);
  const bare = info.get('bare')!;
  const strings = [bare.ttl, bare.ttl_remaining, bare.lease_holder, bare.touched_at];
  assert.deepEqual(
    strings.map((s) => s.length),
    [0, 0, 0, 0],
    'absent string fields read as ""',
  );
  assert.equal(info.get('main')!.checkpoints_v2[0]!.created_at.length, 0);
  const fromReport = report.branches.find((b) => b.branch === 'bare')!;
  assert.deepEqual([fromReport.ttl, fromReport.lease_holder, fromReport.state], ['', '', ''], 'branchReport too');
});
