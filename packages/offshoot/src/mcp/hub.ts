import { type LoggingLevel, type McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { OpsContext } from '../ops/context.js';
import { type RefChange, RefWatch } from '../ops/branch-view.js';
import { servingDaemon } from './daemon/daemon-link.js';
import { followDaemonEvents } from './daemon/daemon-events.js';
import type { ListenFilter } from './transport/listen-filter.js';
import { uriCovers, uriDatabase } from './resources.js';

/** Resource subscriptions one connection (or one listen stream) may hold at once. */
const MAX_SUBSCRIPTIONS = 256;

/**
 * Where change notifications go: a 2025-era connection's own server, the server a 2026-07-28 stdio connection is
 * pinned to, or the event bus of the 2026-07-28 HTTP handler. The last two fan each notification out to the
 * `subscriptions/listen` streams whose filter asked for it.
 */
export interface ChangeSink {
  updated(uri: string): void;
  listChanged(): void;
}

/** One party interested in changes: what it subscribed to, whether it hears list changes, and where they go. */
interface Listener {
  sink: ChangeSink;
  subscribed: Set<string>;
  /** True once it wants list_changed (a 2025 client that listed resources, a listen that asked for it). */
  watching: boolean;
}

/** A 2025-era connection: a listener that also has a log level (none: it does not listen to logs). */
interface Connection extends Listener {
  server: McpServer;
  level: LoggingLevel | undefined;
}

/** The protocol's log levels, least severe first. */
const SEVERITY: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** The sink of a 2025-era connection: unsolicited notifications on its own server. */
function serverSink(server: McpServer): ChangeSink {
  return {
    updated: (uri) => void server.server.sendResourceUpdated({ uri }).catch(() => undefined),
    listChanged: () => void server.server.sendResourceListChanged().catch(() => undefined),
  };
}

/**
 * What the connections of one `offshoot mcp` share: log lines (to each 2025-era client that set a level, else to
 * stderr) and the store's ref changes (to the resources each client subscribed to, and list_changed to those that
 * listed or asked for it, in either era). Changes come from the refs themselves (one RefWatch, polled while anyone
 * listens), checked at once after this server's own tools and whenever the daemon serving the store publishes an
 * event.
 */
export class McpHub {
  readonly #connections = new Set<Connection>();
  readonly #listens = new Set<Listener>();
  #watch: RefWatch | undefined;
  #unwatch: (() => void) | undefined;
  #events: { close(): void } | undefined;

  constructor(
    private readonly open: () => Promise<OpsContext>,
    private readonly stderr: (line: string) => void,
  ) {}

  /**
   * Serves logging/setLevel and resources/(un)subscribe for a 2025-era `server`, until it closes. Call before
   * connect.
   */
  attach(server: McpServer): void {
    const conn: Connection = {
      server,
      sink: serverSink(server),
      level: undefined,
      subscribed: new Set(),
      watching: false,
    };
    server.server.setRequestHandler('logging/setLevel', (req) => {
      conn.level = req.params.level;
      return {};
    });
    server.server.setRequestHandler('resources/subscribe', async (req) => {
      const uri = req.params.uri;
      if (!conn.subscribed.has(uri)) await this.#checkSubscribable(uri, conn.subscribed.size);
      conn.subscribed.add(uri);
      await this.#ensureWatching();
      return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', (req) => {
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

  /** Marks `server`'s 2025-era client as one that listed resources, so it hears list_changed. */
  listed(server: McpServer): void {
    for (const c of this.#connections) if (c.server === server) c.watching = true;
    void this.#ensureWatching();
  }

  /**
   * A 2026-07-28 `subscriptions/listen` stream opened with `filter`: its resources and list changes go to `sink`
   * until `end` is called (the stream ended). `watching` settles once the watch has its baseline: pass the request
   * on after it, so every change after the acknowledgement is heard (as a 2025 subscribe answers only then).
   */
  listen(filter: ListenFilter, sink: ChangeSink): { watching: Promise<void>; end: () => void } {
    // A URI that names no resource of this server can never change: it is not kept.
    const uris = filter.resources.filter((u) => uriDatabase(u) !== undefined).slice(0, MAX_SUBSCRIPTIONS);
    const l: Listener = { sink, subscribed: new Set(uris), watching: filter.listChanged };
    this.#listens.add(l);
    return {
      watching: this.#ensureWatching(),
      end: () => {
        if (this.#listens.delete(l)) this.#maybeStop();
      },
    };
  }

  /**
   * A log line: sent as notifications/message to each 2025-era client whose level admits it; stderr when none
   * listens. (A 2026-07-28 client hears the lines of its own calls, at the level each request names.)
   */
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

  /**
   * Refuses (invalid params, -32602) a subscription to anything but a resource of a database in the store, and one
   * past the cap, so a connection holds a bounded set of URIs that can change.
   */
  async #checkSubscribable(uri: string, held: number): Promise<void> {
    const shown = JSON.stringify(uri.length > 200 ? `${uri.slice(0, 200)}…` : uri);
    const db = uriDatabase(uri);
    if (db === undefined)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `cannot subscribe to ${shown}: not a resource of this server (offshoot://DATABASE, offshoot://DATABASE/BRANCH, …/schema, …/checkpoint/NAME)`,
      );
    if (held >= MAX_SUBSCRIPTIONS)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `cannot subscribe to ${shown}: this connection already holds ${MAX_SUBSCRIPTIONS} subscriptions; unsubscribe from one first`,
      );
    const ctx = await this.open().catch(() => undefined);
    if (ctx === undefined || (await ctx.store.listBranches(db)).length === 0)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `cannot subscribe to ${shown}: there is no database "${db}" in this store (offshoot_list shows them)`,
      );
  }

  *#listeners(): Iterable<Listener> {
    yield* this.#connections;
    yield* this.#listens;
  }

  #wanted(): boolean {
    for (const l of this.#listeners()) if (l.watching || l.subscribed.size > 0) return true;
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

  /** Each sink hears each covered URI once, however many of its listeners subscribed to it (it fans out itself). */
  #tell(changes: RefChange[]): void {
    const listChanged = changes.some((c) => c.added || c.gone);
    const updated = new Map<ChangeSink, Set<string>>();
    const relisted = new Set<ChangeSink>();
    for (const l of this.#listeners()) {
      for (const uri of l.subscribed) {
        if (!changes.some((c) => uriCovers(uri, c.db, c.branch))) continue;
        const uris = updated.get(l.sink) ?? new Set<string>();
        updated.set(l.sink, uris.add(uri));
      }
      if (listChanged && l.watching) relisted.add(l.sink);
    }
    for (const [sink, uris] of updated) for (const uri of uris) sink.updated(uri);
    for (const sink of relisted) sink.listChanged();
  }
}
