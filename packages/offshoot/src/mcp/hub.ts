import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type LoggingLevel,
  LoggingLevelSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import { type RefChange, RefWatch } from '../ops/helpers/context/ref-watch.js';
import { servingDaemon } from './daemon-link.js';
import { followDaemonEvents } from './daemon-events.js';
import { uriCovers } from './resources.js';

/** One connected client: the level it asked for (none: it does not listen to logs) and what it subscribed to. */
interface Connection {
  server: McpServer;
  level: LoggingLevel | undefined;
  subscribed: Set<string>;
  /** True once it listed resources: from then on it hears list_changed. */
  watching: boolean;
}

const SEVERITY = LoggingLevelSchema.options;

/**
 * What the connections of one `offshoot mcp` share: log lines (to each client that set a level, else to stderr) and
 * the store's ref changes (to the resources each client subscribed to, and list_changed to those that listed).
 * Changes come from the refs themselves (one RefWatch, polled while anyone watches), checked at once after this
 * server's own tools and whenever the daemon serving the store publishes an event.
 */
export class McpHub {
  readonly #connections = new Set<Connection>();
  #watch: RefWatch | undefined;
  #unwatch: (() => void) | undefined;
  #events: { close(): void } | undefined;

  constructor(
    private readonly open: () => Promise<OpsContext>,
    private readonly stderr: (line: string) => void,
  ) {}

  /** Serves logging/setLevel and resources/(un)subscribe for `server`, until it closes. Call before connect. */
  attach(server: McpServer): void {
    const conn: Connection = { server, level: undefined, subscribed: new Set(), watching: false };
    server.server.registerCapabilities({ logging: {}, resources: { subscribe: true, listChanged: true } });
    server.server.setRequestHandler(SetLevelRequestSchema, (req) => {
      conn.level = req.params.level;
      return {};
    });
    server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
      conn.subscribed.add(req.params.uri);
      await this.#ensureWatching();
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
      conn.subscribed.delete(req.params.uri);
      this.#maybeStop();
      return {};
    });
    const closed = server.server.onclose;
    server.server.onclose = () => {
      closed?.();
      this.#connections.delete(conn);
      this.#maybeStop();
    };
    this.#connections.add(conn);
  }

  /** Marks `server`'s client as one that listed resources, so it hears list_changed. */
  listed(server: McpServer): void {
    for (const c of this.#connections) if (c.server === server) c.watching = true;
    void this.#ensureWatching();
  }

  /** A log line: sent as notifications/message to each client whose level admits it; stderr when none listens. */
  log(line: string, level: LoggingLevel = 'info'): void {
    const listeners = [...this.#connections].filter((c) => c.level !== undefined);
    if (listeners.length === 0) {
      this.stderr(line);
      return;
    }
    for (const c of listeners) {
      if (SEVERITY.indexOf(level) < SEVERITY.indexOf(c.level as LoggingLevel)) continue;
      void c.server.server
        .notification({ method: 'notifications/message', params: { level, logger: 'offshoot', data: line } })
        .catch(() => undefined);
    }
  }

  /** Checks the refs now (a tool of this server just changed some), resolving once the clients were told. */
  async poke(): Promise<void> {
    await this.#watch?.poke();
  }

  /** Stops watching and listening to the daemon. */
  close(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
    this.#events?.close();
    this.#events = undefined;
  }

  #wanted(): boolean {
    for (const c of this.#connections) if (c.watching || c.subscribed.size > 0) return true;
    return false;
  }

  async #ensureWatching(): Promise<void> {
    const ctx = await this.open().catch(() => undefined);
    if (ctx === undefined || !this.#wanted()) return;
    if (this.#unwatch === undefined) {
      this.#watch ??= new RefWatch(ctx);
      this.#unwatch = this.#watch.subscribe((changes) => this.#tell(changes));
      // The first check sets the baseline the next ones compare with; wait for it so a change right after counts.
      await this.#watch.poke();
    }
    // Each new subscription looks for a daemon again, so one started after the first is heard too.
    this.#listenToDaemon(ctx);
  }

  #maybeStop(): void {
    if (this.#wanted()) return;
    this.close();
  }

  /** Follows the events of the daemon serving the store, if one does: each one is a reason to look at the refs now. */
  #listenToDaemon(ctx: OpsContext): void {
    if (this.#events !== undefined) return;
    let stopped = false;
    this.#events = { close: () => void (stopped = true) };
    void servingDaemon(ctx).then((d) => {
      d?.client.close();
      if (d === undefined || stopped) {
        if (!stopped) this.#events = undefined;
        return;
      }
      // The daemon going away ends the stream; the refs are still polled, and the next subscription looks again.
      this.#events = followDaemonEvents(
        d.socket,
        () => void this.poke(),
        () => (this.#events = undefined),
      );
    });
  }

  #tell(changes: RefChange[]): void {
    const listChanged = changes.some((c) => c.added || c.gone);
    for (const conn of this.#connections) {
      for (const uri of conn.subscribed) {
        if (changes.some((c) => uriCovers(uri, c.db, c.branch)))
          void conn.server.server.sendResourceUpdated({ uri }).catch(() => undefined);
      }
      if (listChanged && conn.watching) conn.server.sendResourceListChanged();
    }
  }
}
