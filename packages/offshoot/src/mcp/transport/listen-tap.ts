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
    return this.inner.send(message, options);
  }

  async close(): Promise<void> {
    this.#endAll();
    await this.inner.close();
  }

  /** Registers a listen (resolving once its watch is ready) or ends a cancelled one. */
  async #look(message: JSONRPCMessage): Promise<void> {
    const listen = listenRequest(message);
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
