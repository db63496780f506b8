import { connect, type Socket } from 'node:net';

/** A subscription to a daemon's event stream; close ends it at once. */
export interface DaemonEvents {
  close(): void;
}

/**
 * Subscribes to the events of the daemon at `socket` on a connection of its own and calls `onEvent` for each one
 * (the content does not matter here: every event is a reason to look at the refs). The connection never keeps the
 * process alive, and `onEnd` runs once when it ends for any reason but close.
 */
export function followDaemonEvents(socket: string, onEvent: () => void, onEnd: () => void): DaemonEvents {
  let closed = false;
  const conn: Socket = connect(socket);
  conn.unref();
  conn.setEncoding('utf8');
  let acked = false;
  let pending = '';
  conn.on('connect', () => void conn.write(`${JSON.stringify({ op: 'subscribe' })}\n`));
  conn.on('data', (chunk: string) => {
    pending += chunk;
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      pending = pending.slice(nl + 1);
      if (acked) onEvent();
      acked = true;
      nl = pending.indexOf('\n');
    }
  });
  conn.on('error', () => undefined);
  conn.on('close', () => {
    if (!closed) onEnd();
  });
  return {
    close() {
      closed = true;
      conn.destroy();
    },
  };
}
