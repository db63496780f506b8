// The DNS-rebinding rule, written once (protocol/host-check.ts) and applied by every local HTTP listener: the rule
// itself, then each real listener — `serve -http` (with the dashboard), `offshoot ui`, `mcp -http` — refusing a
// rebound Host or a foreign Origin with a 403 and serving its own.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { hostCheck } from '../../src/protocol/host-check.js';
import { makeStoreDir, startDaemon, type DaemonProcess, type StoreDir, until } from '../daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import { startUi, type UiProcess } from '../ui/ui-support.js';

const TOKEN = 'host-check-token-0123456789abcdef';

/** One GET (or POST with a body) with the given Host and Origin; resolves to the status. */
function status(url: string, headers: Record<string, string>, body?: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: body === undefined ? 'GET' : 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the Host/Origin rule', () => {
  test('a loopback bind takes loopback names at any port and refuses every other name', () => {
    const check = hostCheck('127.0.0.1');
    for (const host of ['127.0.0.1:7878', 'localhost:1', 'LOCALHOST', '[::1]:80', 'localhost'])
      assert.equal(check({ host }), undefined, host);
    for (const host of ['evil.example.com', 'evil.example.com:7878', '127.0.0.1.nip.io:7878', '10.0.0.1:7878', ''])
      assert.equal(check({ host })?.status, 403, host);
    assert.equal(check({})?.status, 403, 'no Host at all');
  });

  test('an Origin must be the server itself, on any bind', () => {
    for (const bind of ['127.0.0.1', '0.0.0.0', '']) {
      const check = hostCheck(bind);
      assert.equal(check({ host: 'localhost:7878', origin: 'http://localhost:7878' }), undefined);
      assert.equal(check({ host: 'localhost:7878', origin: 'http://localhost:3000' })?.status, 403);
      assert.equal(check({ host: 'localhost:7878', origin: 'https://localhost:7878' })?.status, 403);
      assert.equal(check({ host: 'localhost:7878', origin: 'null' })?.status, 403);
    }
  });

  test('a non-loopback bind (which always has an explicit token) accepts any host name', () => {
    assert.equal(hostCheck('0.0.0.0')({ host: 'db-box.internal:7878' }), undefined);
    assert.equal(hostCheck('10.1.2.3')({ host: '10.1.2.3:7878' }), undefined);
  });
});

describe('every listener refuses a rebound Host or a foreign Origin', () => {
  let s: StoreDir;
  let daemon: DaemonProcess;
  let ui: UiProcess;
  let mcp: ChildProcess;
  const urls: Record<string, string> = {};
  before(async () => {
    s = makeStoreDir();
    assert.equal(s.cli(['create', 'app']).code, 0);
    daemon = await startDaemon(s, ['-http', '127.0.0.1:0', '-ui', '-reap-every', '0'], { OFFSHOOT_TOKEN: TOKEN });
    await until(() => /http: listening on (\S+)/.test(daemon.stderr()), 'the daemon listener');
    const served = /http: listening on (?:http:\/\/)?([^/\s]+)/.exec(daemon.stderr())?.[1] ?? '';
    urls['serve -http'] = `http://${served}/healthz`;
    ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
    urls['ui'] = `${new URL(ui.url).origin}/api/dbs`;
    let err = '';
    mcp = spawn(offshootBin, ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0'], {
      env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    mcp.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
    await until(() => /serving MCP on (http:\/\/\S+)/.test(err), 'the MCP listener');
    urls['mcp -http'] = /serving MCP on (http:\/\/\S+)/.exec(err)?.[1] ?? '';
  });
  after(async () => {
    mcp?.kill('SIGTERM');
    await ui?.stop();
    await daemon?.stop();
    s?.cleanup();
  });

  test('serve -http, ui and mcp -http', async () => {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const mcpHeaders = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    for (const [name, url] of Object.entries(urls)) {
      const port = new URL(url).port;
      const extra = name === 'mcp -http' ? mcpHeaders : {};
      const body = name === 'mcp -http' ? ping : undefined;
      const good = await status(url, { ...extra, Host: `localhost:${port}` }, body);
      assert.ok(good >= 200 && good < 300, `${name}: its own Host gets ${good}`);
      assert.equal(
        await status(url, { ...extra, Host: `evil.example.com:${port}` }, body),
        403,
        `${name}: rebound Host`,
      );
      assert.equal(
        await status(url, { ...extra, Host: `127.0.0.1:${port}`, Origin: 'http://evil.example.com' }, body),
        403,
        `${name}: foreign Origin`,
      );
      const same = await status(url, { ...extra, Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}` }, body);
      assert.ok(same >= 200 && same < 300, `${name}: same-origin page gets ${same}`);
    }
  });
});
