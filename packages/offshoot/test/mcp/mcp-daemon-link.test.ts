// The daemon connection an MCP server keeps between tool calls: a daemon stopped, restarted or replaced between two
// calls leaves the next call riding the daemon that serves now (or at rest while none does); a session opened after
// the connection was made is still seen by every refusal; concurrent calls each get their own answer; and the
// server exits once its input ends with the connection still open.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type DaemonProcess, startDaemon } from '../daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import { asStoreDir, makeMcpStore, type McpSession, type McpStore, ok, refused, startMcp } from './mcp-harness.js';

const DAEMON_FLAGS = ['-flush-every', '0', '-reap-every', '0'];

describe('offshoot mcp: the daemon connection kept between calls', () => {
  let s: McpStore;
  let daemon: DaemonProcess | undefined;
  // Finds the daemon through the store's lock, as a server without -socket does.
  let m: McpSession;
  // Told the daemon's socket, which every daemon of this suite listens on.
  let named: McpSession;
  let forks = 0;

  async function fork(session: McpSession): Promise<string> {
    return ok(await session.call('offshoot_fork', { database: 'app', new_branch: `f${forks++}`, ttl: 'none' }))
      .via as string;
  }

  before(async () => {
    s = makeMcpStore();
    daemon = await startDaemon(asStoreDir(s), DAEMON_FLAGS);
    m = await startMcp(s.store, ['-reap-every', '0']);
    named = await startMcp(s.store, ['-reap-every', '0', '-socket', daemon.sock]);
  });
  after(async () => {
    await m.close();
    await named.close();
    await daemon?.stop();
    s.cleanup();
  });

  test('a daemon stopped and restarted between two calls: at rest while none runs, then the new one', async () => {
    assert.equal(await fork(m), 'daemon');
    assert.equal(await fork(named), 'daemon');
    await daemon?.stop();
    daemon = undefined;
    assert.equal(await fork(m), 'at-rest');
    assert.equal(await fork(named), 'at-rest');
    daemon = await startDaemon(asStoreDir(s), DAEMON_FLAGS);
    assert.equal(await fork(m), 'daemon');
    assert.equal(await fork(named), 'daemon');
    await daemon.stop();
    daemon = await startDaemon(asStoreDir(s), DAEMON_FLAGS);
    assert.equal(await fork(m), 'daemon', 'restarted with no call in between');
    assert.equal(await fork(named), 'daemon', 'restarted with no call in between');
  });

  test('another daemon takes the store on another socket: the lock names it, and the next call rides it', async () => {
    assert.equal(await fork(m), 'daemon');
    await daemon?.stop();
    daemon = await startDaemon(asStoreDir(s), DAEMON_FLAGS, {}, join(s.dir, 'other.sock'));
    assert.equal(await fork(m), 'daemon', 'found through the lock, on the new socket');
    assert.equal(await fork(named), 'at-rest', 'nothing answers on the socket it was told any more');
    await daemon.stop();
    daemon = await startDaemon(asStoreDir(s), DAEMON_FLAGS);
  });

  test('a session opened after the connection was made refuses destroy, rollback and promote', async () => {
    const sock = daemon?.sock ?? '';
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'held', ttl: 'none' }));
    s.cli(['session', 'open', 'app@held', '-socket', sock]);
    for (const session of [m, named]) {
      refused(await session.call('offshoot_destroy', { database: 'app', branch: 'held' }), 'SESSION_OPEN');
      refused(await session.call('offshoot_rollback', { database: 'app', branch: 'held', to: 'fork' }), 'SESSION_OPEN');
      refused(
        await session.call('offshoot_promote', { database: 'app', source: 'main', target: 'held' }),
        'SESSION_OPEN',
      );
    }
    s.cli(['session', 'close', 'app@held', '-socket', sock]);
    ok(await m.call('offshoot_destroy', { database: 'app', branch: 'held' }));
  });

  test('a daemon that stops answering on a kept connection leaves a session-reading call at rest', async () => {
    const sock = daemon?.sock ?? '';
    const pid = daemon?.proc.pid ?? 0;
    const live = async () =>
      (
        ok(await m.call('offshoot_list', { database: 'app' })).branches as { branch: string; live_session: unknown }[]
      ).find((b) => b.branch === 'main')?.live_session ?? null;
    s.cli(['session', 'open', 'app', '-socket', sock]);
    try {
      assert.notEqual(await live(), null, 'riding: the session is seen');
      process.kill(pid, 'SIGSTOP');
      try {
        assert.equal(await live(), null, 'its status probe went unanswered: at rest');
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      assert.notEqual(await live(), null, 'answering again: riding again');
    } finally {
      s.cli(['session', 'close', 'app', '-socket', sock]);
    }
  });

  test('concurrent calls over one server each get their own answer', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `together-${i}`);
    const made = await Promise.all(
      names.map(async (b, i) => {
        const session = i % 2 ? m : named;
        const r = ok(await session.call('offshoot_fork', { database: 'app', new_branch: b, ttl: 'none' }));
        const l = ok(await session.call('offshoot_list', { database: 'app' }));
        return {
          branch: r.branch,
          via: r.via,
          listed: (l.branches as { branch: string }[]).some((x) => x.branch === b),
        };
      }),
    );
    assert.deepEqual(
      made,
      names.map((b) => ({ branch: b, via: 'daemon', listed: true })),
    );
  });
});

describe('offshoot mcp: exits when its input ends, with a daemon connection open', () => {
  let s: McpStore;
  let daemon: DaemonProcess;
  before(async () => {
    s = makeMcpStore();
    daemon = await startDaemon(asStoreDir(s), DAEMON_FLAGS);
  });
  after(async () => {
    await daemon.stop();
    s.cleanup();
  });

  test('stdin closes after a call rode the daemon: the process exits on its own, and the daemon still serves', async () => {
    const proc = spawn(offshootBin, ['-store', s.store, 'mcp', '-reap-every', '0', '-socket', daemon.sock], {
      env: baseEnv(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = once(proc, 'exit');
    let out = '';
    type Answer = { id?: number; result?: { structuredContent?: { via?: string } } };
    const answered = new Map<number, (msg: Answer) => void>();
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const msg = JSON.parse(out.slice(0, nl)) as Answer;
        out = out.slice(nl + 1);
        if (msg.id !== undefined) answered.get(msg.id)?.(msg);
      }
    });
    const rpc = (id: number, method: string, params: unknown) =>
      new Promise<Answer>((resolve) => {
        answered.set(id, resolve);
        proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    await rpc(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'offshoot-test', version: '1.0.0' },
    });
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const forked = await rpc(2, 'tools/call', {
      name: 'offshoot_fork',
      arguments: { database: 'app', new_branch: 'last', ttl: 'none' },
    });
    assert.equal(forked.result?.structuredContent?.via, 'daemon');
    proc.stdin.end();
    const [code, signal] = await exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
    assert.equal((await daemon.request({ op: 'status' })).ok, true);
  });
});
