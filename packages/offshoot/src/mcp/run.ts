import type { McpServer } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { HttpConfig } from '../protocol/http-listen.js';
import { tokenFingerprint } from '../protocol/http-listen.js';
import type { OpsContext } from '../ops/context.js';
import type { McpOptions } from './deps.js';
import { startMcpHttp } from './transport/http.js';
import { Confirmations } from './confirm.js';
import { DaemonLinks } from './daemon/daemon-links.js';
import { type ChangeSink, McpHub } from './hub.js';
import { ListenTap } from './transport/listen-tap.js';
import { MalformedAnswerFilter } from './transport/malformed-answer.js';
import { startReaper } from './reaper.js';
import { buildServer, type Era } from './server.js';

/** What `offshoot mcp` runs with, beyond the tool options. */
export interface McpRun {
  options: McpOptions;
  /** Opens the store; called on first use and again after a failure (a missing store is a tool error, not an exit). */
  openStore: () => Promise<OpsContext>;
  version: string;
  /** Serve MCP Streamable HTTP instead of stdio. */
  http?: HttpConfig;
  log: (line: string) => void;
}

/** Memoizes a successful open; a failed one is retried by the next caller. */
function opener(open: () => Promise<OpsContext>): {
  open: () => Promise<OpsContext>;
  opened: () => OpsContext | undefined;
} {
  let pending: Promise<OpsContext> | undefined;
  let ctx: OpsContext | undefined;
  return {
    open: () => {
      if (ctx) return Promise.resolve(ctx);
      pending ??= open().then(
        (c) => (ctx = c),
        (err: unknown) => {
          pending = undefined;
          throw err;
        },
      );
      return pending;
    },
    opened: () => ctx,
  };
}

/**
 * Serves stdio until the input ends or a signal arrives. The SDK's serveStdio decides the connection's era from its
 * opening message (an `initialize`: 2025; a request with the 2026-07-28 envelope or a `server/discover` probe:
 * 2026-07-28) and pins one server of that era; the tap tells the hub about the listen streams of a 2026-07-28
 * connection, whose change notifications go out through its pinned server.
 */
async function serveStdioUntilClosed(build: (era: Era) => McpServer, hub: McpHub): Promise<void> {
  let pinned: McpServer | undefined;
  const sink: ChangeSink = {
    updated: (uri) => void pinned?.server.sendResourceUpdated({ uri }).catch(() => undefined),
    listChanged: () => void pinned?.server.sendResourceListChanged().catch(() => undefined),
  };
  const input = process.stdin.pipe(new MalformedAnswerFilter((line) => hub.log(line, 'warning')));
  const wire = new ListenTap(new StdioServerTransport(input), (filter) => hub.listen(filter, sink));
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const handle = serveStdio(
    ({ era }) => {
      const server = build(era);
      if (era === 'modern') pinned = server;
      return server;
    },
    { transport: wire },
  );
  await closed;
  await handle.close();
  // The transport stops reading its input; the input's own source would keep the process alive after a signal.
  process.stdin.unpipe(input);
  process.stdin.pause();
}

/**
 * Runs the MCP server, both protocol eras, until its input ends (stdio) or a signal arrives (HTTP): only protocol
 * on stdout; logs go to the clients that asked for them, else to stderr; the background reaper runs alongside when
 * -reap-every is on. The daemon connections the tools keep between calls close when it stops.
 */
export async function runMcp(run: McpRun): Promise<void> {
  const store = opener(run.openStore);
  const hub = new McpHub(store.open, run.log);
  const confirmations = new Confirmations();
  const links = new DaemonLinks();
  const build = (era: Era) => buildServer(run.options, store.open, run.version, hub, confirmations, era, links);
  const reaper =
    run.options.reapEveryMs > 0
      ? startReaper(
          store.open,
          run.options.reapEveryMs,
          (line) => hub.log(line, 'info'),
          () => hub.poke(),
        )
      : undefined;
  try {
    if (run.http) {
      const http = await startMcpHttp(run.http, build, hub);
      if (run.http.tokenSource === 'generated')
        run.log(`offshoot: mcp: http: generated token ${run.http.token} (set OFFSHOOT_TOKEN or -token to choose one)`);
      run.log(
        `offshoot: mcp: http: serving MCP on http://${http.address}/mcp (token fingerprint ${tokenFingerprint(run.http.token)})`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await http.close();
      return;
    }
    await serveStdioUntilClosed(build, hub);
  } finally {
    links.close();
    hub.close();
    await reaper?.stop();
    await store
      .opened()
      ?.store.close()
      .catch(() => undefined);
  }
}
