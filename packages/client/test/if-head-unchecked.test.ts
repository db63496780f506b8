// A promote sent with if_head is refused UNSUPPORTED when the daemon's answer does not echo it (a daemon too old to
// know the field promotes without the compare-and-swap), by the client and by DaemonPlace, which the MCP server and
// the AI SDK tools ride. The daemon is real; between it and the client, a relay drops `result.if_head` from every
// answer, as an older daemon would leave it out.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Client, connect, DaemonPlace, isOffshootError } from '../src/index.js';
import { startDaemon, type TestDaemon } from '../src/testkit.js';

process.env['OFFSHOOT_BIN'] = fileURLToPath(new URL('../../../offshoot', import.meta.url));

/** A relay on `path` to the daemon at `target` that drops `result.if_head` from each answer line. */
function forgetfulRelay(path: string, target: string): Promise<Server> {
  const server = createServer((down) => {
    const up = createConnection(target);
    let partial = '';
    down.pipe(up);
    up.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const msg = JSON.parse(line) as { result?: Record<string, unknown> };
        if (msg.result !== undefined) delete msg.result['if_head'];
        down.write(`${JSON.stringify(msg)}\n`);
      }
    });
    up.on('close', () => down.destroy());
    down.on('close', () => up.destroy());
  });
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

describe('a promote whose answer does not say it checked if_head', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let relay: Server;
  let human: Client;
  let old: Client;
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-relay-'));

  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    relay = await forgetfulRelay(join(dir, 'relay.sock'), daemon.sock);
    human = await connect(daemon.sock);
    old = await connect(join(dir, 'relay.sock'));
    await human.create('app');
    await human.fork('app', 'main', 'a');
    await human.fork('app', 'main', 'b');
  });
  after(async () => {
    old.close();
    human.close();
    relay.close();
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('is refused UNSUPPORTED by the client and by DaemonPlace, naming the undo point', async () => {
    const head = (await human.branches('app')).find((b) => b.branch === 'main')?.head_txid;
    assert.ok(head !== undefined);
    await assert.rejects(
      old.promote('app', 'a', 'main', { force: true, ifHead: head }),
      (e) => isOffshootError(e, 'UNSUPPORTED') && /without checking if_head.*main-pre-promote/.test(e.message),
    );
    await assert.rejects(
      new DaemonPlace(old).promote('app', 'b', 'main', { force: true, ifHead: head }),
      (e) => isOffshootError(e, 'UNSUPPORTED') && /restart 'offshoot serve'/.test(e.hint ?? ''),
    );
    const promoted = await new DaemonPlace(old).promote('app', 'a', 'main', { force: true });
    assert.equal(promoted.if_head, undefined, 'without ifHead, nothing is required of the answer');
    assert.equal(
      (await new DaemonPlace(human).promote('app', 'b', 'main', { force: true, ifHead: promoted.txid })).if_head,
      promoted.txid,
    );
  });
});
