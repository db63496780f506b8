import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { type ListenFilter, listenRequest } from './listen-filter.js';

/**
 * The stdio wire of `offshoot mcp` with a look at what comes in: each 2026-07-28 `subscriptions/listen` the client
 * opens is reported through `listen` until the client cancels it or the connection ends, and passed on once its
 * watch is ready. Every message passes through unchanged and in order: the SDK's serveStdio owns the wire, the era
 * decision and the streams.
 */
export class ListenTap implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly setProtocolVersion?: (version: string) => void;
  readonly #open = new Map<string | number, () => void>();
  #passed: Promise<void> = Promise.resolve();
  /** Set by the opening message as serveStdio decides the era: an `initialize` opens a 2025-era connection. */
  #legacy: boolean | undefined;

  constructor(
    private readonly inner: Transport,
    private readonly listen: (filter: ListenFilter) => { watching: Promise<void>; end: () => void },
  ) {
    if (inner.setProtocolVersion) this.setProtocolVersion = (v) => inner.setProtocolVersion?.(v);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      // In arrival order, each after the watch a listen before it needed is ready.
      this.#passed = this.#passed.then(() => this.#look(message)).then(() => this.onmessage?.(message, extra));
    };
    this.inner.onerror = (err) => this.onerror?.(err);
    this.inner.onclose = () => {
      this.#endAll();
      void this.#passed.then(() => this.onclose?.());
    };
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // A response to a listen ends it, whether it closes the stream or refuses it (a 2025-era connection answers
    // "Method not found"; the SDK's subscription cap, a malformed filter): a refused listen must not stay registered.
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message)) {
      this.#open.get(message.id)?.();
      this.#open.delete(message.id);
    }
    return this.inner.send(message, options);
  }

  async close(): Promise<void> {
    this.#endAll();
    await this.inner.close();
  }

  /**
   * Registers a listen (resolving once its watch is ready) or ends a cancelled one. A 2025-era connection has no
   * listen streams: the SDK answers its `subscriptions/listen` "Method not found", so none is registered.
   */
  async #look(message: JSONRPCMessage): Promise<void> {
    this.#legacy ??= 'method' in message && message.method === 'initialize';
    const listen = this.#legacy ? undefined : listenRequest(message);
    if (listen !== undefined) {
      this.#open.get(listen.id)?.();
      const l = this.listen(listen.filter);
      this.#open.set(listen.id, l.end);
      await l.watching;
      return;
    }
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id === undefined) return;
      this.#open.get(id)?.();
      this.#open.delete(id);
    }
  }

  #endAll(): void {
    for (const end of this.#open.values()) end();
    this.#open.clear();
  }
}
