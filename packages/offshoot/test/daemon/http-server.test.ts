import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import { EventBus } from '../../src/daemon/event-bus.js';
import {
  generateToken,
  isLoopbackHost,
  startHttpServer,
  validateHttpFlags,
  type HttpServerHandle,
} from '../../src/daemon/http-server.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import type { EventEnvelope, Response } from '../../src/protocol/wire.js';

const TOKEN = 'test-token-0123456789abcdef';
/** How long the server lets an SSE write sit unflushed before it drops the reader. */
const SSE_WRITE_DEADLINE_MS = 300;

async function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Reads SSE frames until `n` data frames arrived; returns them and every comment line seen. */
async function readFrames(
  body: ReadableStream<Uint8Array>,
  n: number,
  opts: { ping?: boolean } = {},
): Promise<{ events: EventEnvelope[]; comments: string[] }> {
  const events: EventEnvelope[] = [];
  const comments: string[] = [];
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    text += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = text.indexOf('\n\n')) >= 0) {
      const frame = text.slice(0, i);
      text = text.slice(i + 2);
      if (frame.startsWith('data: ')) events.push(JSON.parse(frame.slice(6)) as EventEnvelope);
      else comments.push(frame);
    }
    if (events.length >= n && (!opts.ping || comments.includes(': ping'))) break;
  }
  return { events, comments };
}

describe('HTTP listener', () => {
  const calls: Array<{ req: unknown; transport: string }> = [];
  const bus = new EventBus();
  let server: HttpServerHandle;
  let base: string;
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const json = { ...auth, 'Content-Type': 'application/json' };

  before(async () => {
    const metrics = await DaemonMetrics.create('1.2.3');
    server = await startHttpServer({
      addr: '127.0.0.1:0',
      token: TOKEN,
      dispatch: async (req, transport) => {
        calls.push({ req, transport });
        return { ok: true, databases: ['a', 'b'] } satisfies Response;
      },
      metrics,
      events: bus,
      sessionCount: () => 3,
      ssePingMs: 40,
      sseWriteDeadlineMs: SSE_WRITE_DEADLINE_MS,
    });
    base = `http://${server.address}`;
  });
  after(() => server.close());

  test('healthz needs no token and reports the session count', async () => {
    const res = await fetch(`${base}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true, sessions: 3 });
    assert.equal((await fetch(`${base}/healthz`, { method: 'POST' })).status, 405);
  });

  test('a missing, wrong or differently sized token gets 401 on every guarded route', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: `Bearer ${TOKEN}x` },
      { Authorization: 'Bearer short' },
      { Authorization: TOKEN },
    ];
    for (const headers of attempts) {
      const rpc = await fetch(`${base}/rpc`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: '{"op":"dbs"}',
      });
      assert.equal(rpc.status, 401);
      assert.match(rpc.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal(((await rpc.json()) as Response).ok, false);
      assert.equal((await fetch(`${base}/metrics`, { headers })).status, 401);
      const ev = await fetch(`${base}/events`, { headers });
      assert.equal(ev.status, 401);
      await ev.body?.cancel();
    }
    assert.equal(calls.length, 0, 'nothing was dispatched');
  });

  test('POST /rpc dispatches the parsed request with the http transport', async () => {
    const res = await fetch(`${base}/rpc`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json; charset=utf-8' },
      body: '{"op":"dbs"}',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true, databases: ['a', 'b'] });
    assert.deepEqual(calls.at(-1), { req: { op: 'dbs' }, transport: 'http' });
  });

  test('bad method, content type, JSON and unknown routes are refused', async () => {
    const before = calls.length;
    const get = await fetch(`${base}/rpc`, { headers: auth });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal((await fetch(`${base}/metrics`, { method: 'POST', headers: auth })).status, 405);
    const text = await fetch(`${base}/rpc`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'text/plain' },
      body: '{"op":"dbs"}',
    });
    assert.equal(text.status, 400);
    const bad = await fetch(`${base}/rpc`, { method: 'POST', headers: json, body: '{"op":' });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as Response).code, 'INVALID_ARGUMENT');
    assert.equal((await fetch(`${base}/rpc`, { method: 'POST', headers: json, body: '[1]' })).status, 400);
    assert.equal((await fetch(`${base}/nope`, { headers: auth })).status, 404);
    assert.equal(calls.length, before);
  });

  test('export is refused with 400 and subscribe in-band, neither reaching dispatch', async () => {
    const before = calls.length;
    const exp = await fetch(`${base}/rpc`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ op: 'export', db: 'a', path: '/tmp/x.db' }),
    });
    assert.equal(exp.status, 400);
    const expBody = (await exp.json()) as Response;
    assert.equal(expBody.ok, false);
    assert.equal(expBody.code, 'UNSUPPORTED');
    assert.match(expBody.error ?? '', /export/);
    const sub = await fetch(`${base}/rpc`, { method: 'POST', headers: json, body: '{"op":"subscribe"}' });
    assert.equal(sub.status, 200);
    const subBody = (await sub.json()) as Response;
    assert.equal(subBody.ok, false);
    assert.match(subBody.hint ?? '', /\/events/);
    assert.equal(calls.length, before);
  });

  test('a body over 1 MiB gets 413, whether announced by Content-Length or streamed', async () => {
    const big = JSON.stringify({ op: 'dbs', pad: 'x'.repeat(1 << 20) });
    const res = await fetch(`${base}/rpc`, { method: 'POST', headers: json, body: big });
    assert.equal(res.status, 413);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/rpc`, { method: 'POST', headers: json }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on('error', reject);
      // No Content-Length: the cap must hold while reading a chunked body too.
      for (let i = 0; i < 20; i++) req.write('x'.repeat(64 * 1024));
      req.end('y'.repeat(64 * 1024));
    });
    assert.equal(status, 413);
    const fine = await fetch(`${base}/rpc`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ op: 'dbs', pad: 'x'.repeat(1000) }),
    });
    assert.equal(fine.status, 200);
  });

  test('GET /metrics serves the Prometheus text format', async () => {
    const res = await fetch(`${base}/metrics`, { headers: auth });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(await res.text(), /^offshoot_build_info\{version="1\.2\.3"\} 1$/m);
  });

  test('GET /events streams data frames in publish order, with pings', async () => {
    const res = await fetch(`${base}/events`, { headers: auth });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    await until(() => bus.subscriberCount === 1, 'the SSE subscription');
    for (let i = 0; i < 20; i++) bus.publish('flushed', 'app', 'main', { kind: 'auto', txid: i, duration_seconds: 0 });
    bus.publish('session_closed', 'app', 'main');
    // Read on until a ping has come as well: the stream keeps pinging while it is open.
    const { events, comments } = await readFrames(res.body!, 21, { ping: true });
    assert.deepEqual(
      events.slice(0, 20).map((e) => e.detail?.['txid']),
      Array.from({ length: 20 }, (_, i) => i),
    );
    assert.equal(events[20]!.type, 'session_closed');
    assert.equal(events[0]!.v, 1);
    assert.ok(comments.includes(': ping'), `no ping among ${JSON.stringify(comments)}`);
    await until(() => bus.subscriberCount === 0, 'the subscription to end after the reader left');
  });

  test('an SSE reader that stops reading is dropped and its connection closed at the write deadline', {
    timeout: 60_000,
  }, async () => {
    const sock = connect(Number(server.address.split(':').at(-1)), '127.0.0.1');
    sock.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    sock.pause();
    await until(() => bus.subscriberCount === 1, 'the stalled subscription');

    const detail = { kind: 'auto', pad: 'p'.repeat(64 * 1024) };
    let slowest = 0;
    for (let i = 0; i < 2000 && bus.subscriberCount > 0; i++) {
      const t = performance.now();
      bus.publish('flushed', 'app', 'main', { ...detail, txid: i });
      slowest = Math.max(slowest, performance.now() - t);
      await new Promise<void>((r) => setImmediate(r));
    }
    assert.equal(bus.subscriberCount, 0, 'the stalled reader was dropped by the bus');
    // A publish that waited on the stalled socket would take its write deadline; a loaded machine takes far less.
    assert.ok(slowest < SSE_WRITE_DEADLINE_MS, `a publish took ${slowest.toFixed(1)} ms`);

    // Past the deadline the server has given up on the socket: resuming shows a stream cut short, never finished.
    await new Promise((r) => setTimeout(r, SSE_WRITE_DEADLINE_MS * 2));
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    sock.resume();
    await new Promise<void>((resolve) => sock.on('close', () => resolve()));
    assert.match(text, /^HTTP\/1\.1 200/);
    assert.ok(text.includes('data: {"v":1'), 'some frames were delivered');
    assert.equal(
      text.includes('dropped_slow_consumer'),
      false,
      'the final notice was never written, the socket was closed',
    );
    assert.equal(text.endsWith('0\r\n\r\n'), false, 'the chunked body was not terminated');
  });

  test('close() ends open event streams and stops listening', async () => {
    const metrics = await DaemonMetrics.create('x');
    const events = new EventBus();
    const s = await startHttpServer({
      addr: 'localhost:0',
      token: TOKEN,
      dispatch: async () => ({ ok: true }),
      metrics,
      events,
      sessionCount: () => 0,
    });
    const res = await fetch(`http://${s.address}/events`, { headers: auth });
    await until(() => events.subscriberCount === 1, 'subscription');
    const drained = (async () => {
      let n = 0;
      for await (const chunk of res.body!) n += chunk.length;
      return n;
    })();
    await s.close();
    assert.equal(await drained, 0, 'the stream ended cleanly with nothing pending');
    await assert.rejects(fetch(`http://${s.address}/healthz`));
  });
});

describe('HTTP flag validation', () => {
  test('loopback hosts and generated tokens', () => {
    for (const h of ['127.0.0.1', '::1', '[::1]', 'localhost', 'LOCALHOST']) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ['0.0.0.0', '', '10.0.0.1', '127.0.0.2', 'example.com', '::'])
      assert.equal(isLoopbackHost(h), false, h);
    const t = generateToken();
    assert.match(t, /^[0-9a-f]{64}$/);
    assert.notEqual(generateToken(), t);
  });

  test('HTTP off: token and acknowledgment flags are errors on their own, the env token is not', () => {
    assert.equal(validateHttpFlags({}, {}), undefined);
    assert.equal(validateHttpFlags({}, { OFFSHOOT_TOKEN: 'x' }), undefined);
    assert.throws(
      () => validateHttpFlags({ token: TOKEN }, {}),
      (e) => hasCode(e, 'USAGE') && /-token requires -http/.test(e.message),
    );
    assert.throws(
      () => validateHttpFlags({ allowNonLoopback: true }, {}),
      (e) => hasCode(e, 'USAGE') && /-http-allow-non-loopback requires -http/.test(e.message),
    );
  });

  test('loopback binds take a flag, env or generated token; explicit ones must be long enough', () => {
    const gen = validateHttpFlags({ http: '127.0.0.1:7878' }, {});
    assert.equal(gen?.tokenSource, 'generated');
    assert.match(gen?.token ?? '', /^[0-9a-f]{64}$/);
    assert.equal(gen?.port, 7878);
    assert.equal(validateHttpFlags({ http: '[::1]:80' }, { OFFSHOOT_TOKEN: TOKEN })?.tokenSource, 'env');
    const flag = validateHttpFlags({ http: 'localhost:0', token: TOKEN }, { OFFSHOOT_TOKEN: 'other-token-0123456789' });
    assert.deepEqual([flag?.tokenSource, flag?.token], ['flag', TOKEN]);
    assert.throws(
      () => validateHttpFlags({ http: '127.0.0.1:1', token: 'x'.repeat(15) }, {}),
      (e) => hasCode(e, 'USAGE') && /too short/.test(e.message),
    );
    assert.throws(
      () => validateHttpFlags({ http: '127.0.0.1:1' }, { OFFSHOOT_TOKEN: 'short' }),
      (e) => hasCode(e, 'USAGE') && /OFFSHOOT_TOKEN/.test(e.message),
    );
    assert.throws(
      () => validateHttpFlags({ http: '127.0.0.1' }, {}),
      (e) => hasCode(e, 'USAGE'),
    );
    assert.throws(
      () => validateHttpFlags({ http: '127.0.0.1:99999' }, {}),
      (e) => hasCode(e, 'USAGE'),
    );
  });

  test('non-loopback binds fail two distinct ways without the acknowledgment and an explicit token', () => {
    const noAck = (() => {
      try {
        validateHttpFlags({ http: '0.0.0.0:7878', token: TOKEN }, {});
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    const noToken = (() => {
      try {
        validateHttpFlags({ http: ':7878', allowNonLoopback: true }, {});
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(hasCode(noAck, 'USAGE') && /non-loopback address/.test(noAck.message));
    assert.ok(hasCode(noToken, 'USAGE') && /explicit token/.test(noToken.message));
    assert.notEqual(noAck.message, noToken.message);
    const ok = validateHttpFlags({ http: '0.0.0.0:7878', allowNonLoopback: true }, { OFFSHOOT_TOKEN: TOKEN });
    assert.deepEqual([ok?.host, ok?.tokenSource], ['0.0.0.0', 'env']);
  });
});
