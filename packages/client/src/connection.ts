import type { Socket } from 'node:net';
import { OffshootError } from './errors.js';
import { LineSplitter } from './line-splitter.js';
import type { WireOrigin, WireRequest, WireResponse } from './types.js';
import { badResponse, decodeResponse, encodeRequest, MAX_RESPONSE_BYTES } from './wire-codec.js';

interface Pending {
  line: string;
  resolve: (res: WireResponse) => void;
  reject: (err: unknown) => void;
}

/**
 * One daemon connection used strictly request/response: requests wait in a FIFO queue and the next is written only
 * once the previous one is answered, because the protocol has no request ids and no pipelining.
 */
export class Connection {
  readonly #socket: Socket;
  readonly #splitter = new LineSplitter(MAX_RESPONSE_BYTES);
  readonly #queue: Pending[] = [];
  #inFlight: Pending | undefined;
  #broken: OffshootError | undefined;

  readonly #store: string | undefined;
  readonly #actor: Pick<WireRequest, 'actor' | 'allow_force'>;
  /** Who asks, stamped on every request that names no origin of its own. */
  origin: WireOrigin | undefined;

  /**
   * `store`, when given, is stamped on every request that does not name one; `actor` (who asks, for an agent) on
   * every request.
   */
  constructor(
    socket: Socket,
    store?: string,
    actor: Pick<WireRequest, 'actor' | 'allow_force'> = {},
    origin?: WireOrigin,
  ) {
    this.#socket = socket;
    this.#store = store;
    this.#actor = actor;
    this.origin = origin;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.#fail(closedError('daemon closed the connection', err)));
    socket.on('close', () => this.#fail(closedError('daemon closed the connection')));
  }

  /** Sends one request after those queued before it; resolves with the ok response or rejects with its error. */
  request(req: WireRequest): Promise<WireResponse> {
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    return new Promise((resolve, reject) => {
      const stamped = {
        ...this.#actor,
        ...(this.origin !== undefined ? { origin: this.origin } : {}),
        ...(this.#store !== undefined && req.store === undefined ? { ...req, store: this.#store } : req),
      };
      this.#queue.push({ line: encodeRequest(stamped), resolve, reject });
      this.#next();
    });
  }

  /** True once the connection has closed or failed: every request on it now fails with CONNECTION_CLOSED. */
  get closed(): boolean {
    return this.#broken !== undefined;
  }

  /** Closes the connection; requests still waiting fail with CONNECTION_CLOSED. */
  close(): void {
    this.#fail(closedError('client closed'));
  }

  #next(): void {
    if (this.#inFlight !== undefined || this.#broken !== undefined) return;
    const p = this.#queue.shift();
    if (p === undefined) return;
    this.#inFlight = p;
    this.#socket.write(p.line);
  }

  #onData(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.#splitter.push(chunk);
    } catch (err) {
      this.#fail(err as OffshootError);
      return;
    }
    for (const line of lines) {
      const p = this.#inFlight;
      if (p === undefined) {
        this.#fail(badResponse('a line nobody asked for', line));
        return;
      }
      this.#inFlight = undefined;
      try {
        p.resolve(decodeResponse(line));
      } catch (err) {
        p.reject(err);
        if ((err as OffshootError).code === 'BAD_RESPONSE') {
          this.#fail(err as OffshootError);
          return;
        }
      }
    }
    this.#next();
  }

  #fail(err: OffshootError): void {
    if (this.#broken !== undefined) return;
    this.#broken = err;
    this.#socket.destroy();
    const waiting = this.#queue.splice(0);
    if (this.#inFlight !== undefined) waiting.unshift(this.#inFlight);
    this.#inFlight = undefined;
    for (const p of waiting) p.reject(err);
  }
}

function closedError(message: string, cause?: unknown): OffshootError {
  return new OffshootError('CONNECTION_CLOSED', message, {
    hint: 'the daemon may have shut down or crashed; reconnect, and check `offshoot status` before retrying a write',
    cause,
  });
}
