import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { Connection, type ConnectionHooks } from './connection.js';
import { clearStaleSocket, listenPrivate } from './socket-file.js';

/** The daemon's unix-socket listener and its connections. */
export class SocketServer {
  private readonly connections = new Set<Connection>();

  private constructor(
    readonly path: string,
    private readonly server: Server,
  ) {}

  /** Clears a stale socket file, then listens privately (0600) on path. */
  static async listen(path: string, hooks: ConnectionHooks): Promise<SocketServer> {
    await clearStaleSocket(path);
    const server = createServer({ pauseOnConnect: false });
    const s = new SocketServer(path, server);
    server.on('connection', (socket) => {
      const c = new Connection(socket, hooks);
      s.connections.add(c);
      void c.closed.then(() => s.connections.delete(c));
    });
    await listenPrivate(server, path);
    return s;
  }

  /** Stops accepting, then ends every connection once its request in flight is answered. */
  async close(): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([...this.connections].map((c) => c.close()));
    await stopped;
  }

  /** Drops every connection at once (the shutdown deadline passed). */
  destroyAll(): void {
    for (const c of this.connections) c.destroy();
  }

  /** Removes the socket file (the listener normally unlinks it on close; this covers every other exit path). */
  async removeFile(): Promise<void> {
    await rm(this.path, { force: true });
  }
}
