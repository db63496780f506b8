// A pass-through unix socket between a client and a real daemon that records every request line: the test sees
// exactly what the adapter sent, and the daemon answers it as always.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The tap's socket, what passed through it so far, and its shutdown. */
export interface WireTap {
  sock: string;
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Listens on a fresh socket and forwards each connection to `daemonSock`, recording the requests. */
export async function wireTap(daemonSock: string): Promise<WireTap> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-tap-'));
  const sock = join(dir, 'tap.sock');
  const requests: Array<Record<string, unknown>> = [];
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const daemon = connect(daemonSock);
    open.add(client).add(daemon);
    let buf = '';
    client.on('data', (d) => {
      buf += d.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        requests.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
        buf = buf.slice(i + 1);
      }
    });
    client.pipe(daemon).pipe(client);
    const end = () => {
      client.destroy();
      daemon.destroy();
    };
    client.on('error', end).on('close', end);
    daemon.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(sock, r));
  return {
    sock,
    requests,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
