import type { Socket } from 'node:net';
import { fail } from '../core/errors.js';
import { errorResponse } from '../protocol/errors.js';
import { encodeResponse } from '../protocol/response-line.js';
import { MAX_REQUEST_BYTES, type Response } from '../protocol/wire.js';
import type { Subscription } from './event-bus.js';

/** A subscriber that keeps output unflushed this long (it stopped reading) is disconnected. */
const WRITE_DEADLINE_MS = 45_000;

/** What a socket connection needs from the daemon. */
export interface ConnectionHooks {
  dispatch(req: unknown): Promise<Response>;
  subscribe(): Subscription;
}

function parseLine(line: string): { req: unknown } | { error: Response } {
  try {
    const req: unknown = JSON.parse(line);
    if (typeof req === 'object' && req !== null && !Array.isArray(req)) return { req };
  } catch {
    // Reported below, like a non-object.
  }
  return {
    error: errorResponse(
      fail('INVALID_ARGUMENT', 'bad request: not a JSON object', {
        hint: 'send one JSON object per line, e.g. {"op":"status"}',
      }),
    ),
  };
}

/**
 * One client connection on the unix socket: newline-delimited JSON, strictly one request then its response, many
 * requests per connection. Reading pauses while a request runs, so a client that pipelines cannot queue unbounded
 * work. A `subscribe` request turns the connection into an event stream for good.
 */
export class Connection {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private readonly lines: string[] = [];
  private busy = false;
  private closing = false;
  private subscription: Subscription | undefined;
  readonly closed: Promise<void>;

  constructor(
    private readonly socket: Socket,
    private readonly hooks: ConnectionHooks,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
    socket.once('close', () => this.subscription?.close());
  }

  private onData(chunk: Buffer): void {
    if (this.subscription || this.closing) return;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.buffered.push(chunk.subarray(start, nl));
      this.bufferedBytes += nl - start;
      if (!this.take()) return;
      start = nl + 1;
    }
    this.buffered.push(chunk.subarray(start));
    this.bufferedBytes += chunk.length - start;
    if (this.bufferedBytes > MAX_REQUEST_BYTES) {
      this.refuseOversize();
      return;
    }
    this.pumpSafely();
  }

  // Nothing a request does may reach the process as an unhandled rejection: that would end every session.
  private pumpSafely(): void {
    this.pump().catch(() => this.socket.destroy());
  }

  // Moves the buffered bytes into one complete line; false when that line was too large (the connection ends).
  private take(): boolean {
    if (this.bufferedBytes > MAX_REQUEST_BYTES) {
      this.refuseOversize();
      return false;
    }
    const line = Buffer.concat(this.buffered).toString('utf8').replace(/\r$/, '');
    this.buffered = [];
    this.bufferedBytes = 0;
    if (line.trim() !== '') this.lines.push(line);
    return true;
  }

  private refuseOversize(): void {
    this.closing = true;
    this.buffered = [];
    this.lines.length = 0;
    const res = errorResponse(
      fail('INVALID_ARGUMENT', `request line exceeds ${MAX_REQUEST_BYTES} bytes`, { hint: 'send smaller requests' }),
    );
    this.finish(encodeResponse(res));
  }

  // Ends our side once everything written has been flushed, without waiting for the client to end its side (a
  // client that keeps an idle connection open must not hold up a shutdown).
  private finish(last?: string): void {
    this.socket.end(last ?? '', () => this.socket.destroy());
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.socket.pause();
    try {
      for (let line = this.lines.shift(); line !== undefined && !this.socket.destroyed; line = this.lines.shift()) {
        const parsed = parseLine(line);
        if ('error' in parsed) {
          await this.send(parsed.error);
          continue;
        }
        if ((parsed.req as { op?: unknown }).op === 'subscribe') {
          this.lines.length = 0;
          this.stream().catch(() => this.socket.destroy());
          return;
        }
        await this.send(await this.hooks.dispatch(parsed.req));
      }
    } finally {
      this.busy = false;
      if (this.closing && !this.subscription) this.finish();
      else if (!this.subscription) this.socket.resume();
    }
  }

  // A client that pipelines requests without reading the answers gets its next one served only once the last has
  // been taken (or it is dropped at the write deadline), so unread answers never pile up in memory.
  private async send(res: Response): Promise<void> {
    if (this.socket.destroyed) return;
    if (!this.socket.write(encodeResponse(res))) await this.drained();
  }

  private async stream(): Promise<void> {
    const sub = this.hooks.subscribe();
    this.subscription = sub;
    // Input is ignored from here on, but still read so a client hang-up is noticed.
    this.socket.resume();
    await this.send({ ok: true });
    for await (const env of sub) {
      if (this.socket.destroyed) break;
      if (!this.socket.write(`${JSON.stringify(env)}\n`)) await this.drained();
    }
    if (!this.socket.destroyed) this.finish();
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.socket.destroy();
        done();
      }, WRITE_DEADLINE_MS);
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** Ends the connection gracefully: after the request in flight (if any), or by ending the event stream. */
  close(): Promise<void> {
    this.closing = true;
    this.lines.length = 0;
    if (this.subscription) this.subscription.close();
    else if (!this.busy) this.finish();
    return this.closed;
  }

  /** Drops the connection at once. */
  destroy(): void {
    this.socket.destroy();
  }
}
