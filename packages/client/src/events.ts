import { dial, type ConnectOptions } from './dial.js';
import { isOffshootError, OffshootError } from './errors.js';
import { LineSplitter } from './line-splitter.js';
import type { EventEnvelope } from './types.js';
import { badResponse, decodeResponse, encodeRequest, MAX_RESPONSE_BYTES, parseObject } from './wire-codec.js';

/** Subscribes on a fresh connection and yields events until the daemon drops or ends the stream. */
export async function* subscribe(
  socketPath: string,
  opts: ConnectOptions,
  onSubscribed?: () => void,
): AsyncGenerator<EventEnvelope, void, undefined> {
  const socket = await dial(socketPath, opts);
  // A daemon that hangs up before the ack (say, shutting down) makes the write fail with EPIPE; the read below
  // reports that as CONNECTION_CLOSED, so the write's error must not go unhandled.
  socket.on('error', () => undefined);
  try {
    socket.write(encodeRequest({ op: 'subscribe' }));
    const splitter = new LineSplitter(MAX_RESPONSE_BYTES);
    let acked = false;
    try {
      for await (const chunk of socket as AsyncIterable<Buffer>) {
        for (const line of splitter.push(chunk)) {
          if (!acked) {
            decodeResponse(line);
            acked = true;
            onSubscribed?.();
            continue;
          }
          const env = parseObject(line);
          if (env['v'] !== 1 || typeof env['type'] !== 'string') throw badResponse('not an event', line);
          yield env as unknown as EventEnvelope;
          if (env['type'] === 'dropped_slow_consumer') return;
        }
      }
    } catch (err) {
      if (isOffshootError(err)) throw err;
      throw new OffshootError('CONNECTION_CLOSED', 'daemon closed the connection', {
        hint: 'reconnect and subscribe again',
        cause: err,
      });
    }
    if (!acked)
      throw new OffshootError('CONNECTION_CLOSED', 'daemon closed the connection before acknowledging subscribe', {
        hint: 'check the daemon log',
      });
  } finally {
    socket.destroy();
  }
}
