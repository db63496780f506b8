// The limits every local HTTP listener shares (the daemon's -http, `offshoot mcp -http`, `offshoot ui`), checked on
// the real processes: a client that sends its headers slowly is cut off, and a body over the cap gets a real 413.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import { makeStoreDir, startDaemon, until, type DaemonProcess, type StoreDir } from '../daemon/daemon-process.js';
import { startUi, type UiProcess } from '../ui/ui-support.js';

const TOKEN = 'http-limits-token-0123456789abcdef';
/** The kit's header timeout is 5 s, checked every second; Node's default check (30 s) let a slow client sit 35 s. */
const SLOW_HEADER_BOUND_MS = 15_000;

/** One listener under test: where it listens, the path it serves requests on, and its body cap. */
interface Listener {
  name: string;
  hostPort: () => string;
  path: string;
  cap: number;
}

/** Opens a connection, sends half a request's headers, and waits for the server to answer or hang up. */
function slowHeaders(hostPort: string): Promise<{ ms: number; answer: string }> {
  const [host, port] = [hostPort.slice(0, hostPort.lastIndexOf(':')), Number(hostPort.split(':').pop())];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let answer = '';
    const socket = connect({ host, port }, () => socket.write(`GET / HTTP/1.1\r\nHost: ${hostPort}\r\n`));
    socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
    socket.on('error', reject);
    socket.on('close', () => resolve({ ms: performance.now() - t0, answer }));
  });
}

/** Sends headers announcing a body one byte over the cap with `Expect: 100-continue`, and reads the first answer. */
function expectContinue(l: Listener): Promise<string> {
  const hostPort = l.hostPort();
  const [host, port] = [hostPort.slice(0, hostPort.lastIndexOf(':')), Number(hostPort.split(':').pop())];
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect({ host, port }, () =>
      socket.write(
        `POST ${l.path} HTTP/1.1\r\nHost: ${hostPort}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
          `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
          `Content-Length: ${l.cap + 1}\r\nExpect: 100-continue\r\n\r\n`,
      ),
    );
    socket.setEncoding('utf8').on('data', (d: string) => {
      answer += d;
      if (answer.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
  });
}

/** Posts a body over the cap the way a plain client does (the whole body, no Expect); resolves with the status. */
function postTooLarge(l: Listener, chunked: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = Buffer.alloc(l.cap + 64 * 1024, 'x');
    const headers: Record<string, string | number> = {
      Authorization: `Bearer ${TOKEN}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(chunked ? {} : { 'Content-Length': body.length }),
    };
    const req = request(`http://${l.hostPort()}${l.path}`, { method: 'POST', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
    req.end();
  });
}

describe('the HTTP limits of every listener', () => {
  let s: StoreDir;
  let daemon: DaemonProcess;
  let mcp: ChildProcess;
  let mcpAddr = '';
  let ui: UiProcess;
  const listeners: Listener[] = [];

  before(async () => {
    s = makeStoreDir();
    let mcpErr = '';
    mcp = spawn(offshootBin, ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0'], {
      env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    mcp.stderr?.setEncoding('utf8').on('data', (d: string) => (mcpErr += d));
    [daemon, ui] = await Promise.all([
      startDaemon(s, ['-http', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN }),
      startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN }),
    ]);
    await until(() => /listening on /.test(daemon.stderr()), 'the daemon http listener');
    await until(() => /serving MCP on http:\/\/(\S+)\/mcp/.test(mcpErr), 'the MCP listener');
    mcpAddr = /serving MCP on http:\/\/(\S+)\/mcp/.exec(mcpErr)?.[1] ?? '';
    const daemonAddr = /listening on (?:http:\/\/)?(\S+?)\/?(?:\s|$)/.exec(daemon.stderr())?.[1] ?? '';
    listeners.push(
      { name: 'serve -http', hostPort: () => daemonAddr, path: '/rpc', cap: 1 << 20 },
      { name: 'mcp -http', hostPort: () => mcpAddr, path: '/mcp', cap: 4 << 20 },
      { name: 'ui', hostPort: () => new URL(ui.url).host, path: '/', cap: 1 << 20 },
    );
  });
  after(async () => {
    mcp.kill('SIGTERM');
    await Promise.all([daemon.stop(), ui.stop()]);
    s.cleanup();
  });

  test('a client that sends its headers slowly is answered 408 and cut off after the header timeout', async () => {
    const cut = await Promise.all(listeners.map((l) => slowHeaders(l.hostPort())));
    for (const [i, l] of listeners.entries()) {
      const c = cut[i] as { ms: number; answer: string };
      assert.match(c.answer, /^HTTP\/1\.1 408 /, `${l.name}: ${JSON.stringify(c.answer)}`);
      assert.ok(c.ms < SLOW_HEADER_BOUND_MS, `${l.name} held a slow-header connection ${c.ms.toFixed(0)} ms`);
    }
  });

  test('a body announced over the cap with Expect: 100-continue gets 413 at once, never 100 Continue', async () => {
    for (const l of listeners) {
      const answer = await expectContinue(l);
      assert.match(answer, /^HTTP\/1\.1 413 /, `${l.name}: ${JSON.stringify(answer.slice(0, 200))}`);
      assert.match(answer, /content-type: application\/json/i, l.name);
    }
  });

  test('a body over the cap sent whole gets a readable 413, announced or chunked, and the listener serves on', async () => {
    for (const l of listeners) {
      assert.equal(await postTooLarge(l, false), 413, `${l.name}, with Content-Length`);
      if (l.name !== 'ui') assert.equal(await postTooLarge(l, true), 413, `${l.name}, chunked`);
    }
    const health = await fetch(`http://${listeners[0]?.hostPort()}/healthz`);
    assert.equal(health.status, 200);
  });
});
